"""zsets commands."""

"""sets commands."""

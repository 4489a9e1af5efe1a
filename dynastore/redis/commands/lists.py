"""lists commands."""

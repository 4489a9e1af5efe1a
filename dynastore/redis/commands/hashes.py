"""hashes commands."""

"""dynastore: a DynamoDB-compatible database written in Python."""

__version__ = "0.1.0"

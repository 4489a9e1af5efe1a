"""The PostgreSQL backend (storage.py), its schema and migrations (schema.py,
migrations/). Importing it needs psycopg (``pip install 'dynastore[postgres]'``)."""

from dynastore.storage.postgres.storage import PostgresStorage

__all__ = ["PostgresStorage"]

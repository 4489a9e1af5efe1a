"""dynastore: a DynamoDB-compatible database written in Python.

``dynastore.open()`` opens an embedded database with real boto3 clients
(see dynastore/embedded.py); ``dynastore serve`` runs the HTTP server.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Lazy, so that `python -m dynastore serve` does not pay for the embedded API.
    if name in ("open", "EmbeddedDatabase"):
        from dynastore import embedded

        return getattr(embedded, name)
    raise AttributeError(f"module 'dynastore' has no attribute {name!r}")

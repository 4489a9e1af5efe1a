"""Request-shape validation (placeholder: being written; accepts everything)."""

from __future__ import annotations

from typing import Any


def validate_request(operation: str, request: dict[str, Any]) -> None:
    return None

"""Small helpers for the black-box tests (import as ``from tests.api.helpers import ...``)."""

from __future__ import annotations

from typing import Any

import pytest


def error_of(excinfo: pytest.ExceptionInfo[Any]) -> tuple[str, str]:
    """(error code, message) of a botocore ClientError."""
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")

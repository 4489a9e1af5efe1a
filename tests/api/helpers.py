"""Small helpers for the black-box tests (import as ``from tests.api.helpers import ...``)."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from typing import Any

import pytest


def error_of(excinfo: pytest.ExceptionInfo[Any]) -> tuple[str, str]:
    """(error code, message) of a botocore ClientError."""
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")


def kill_9_under_load(process: subprocess.Popen[bytes], writers: list[threading.Thread], load_seconds: float) -> None:
    """Start ``writers``, let them load the server for ``load_seconds``, then
    SIGKILL it and wait until every writer has noticed (each records only what
    the server acknowledged)."""
    for writer in writers:
        writer.start()
    time.sleep(load_seconds)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    for writer in writers:
        writer.join(timeout=15)
    assert not any(writer.is_alive() for writer in writers)

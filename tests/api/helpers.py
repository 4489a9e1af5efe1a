"""Small helpers for the black-box tests (import as ``from tests.api.helpers import ...``)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDTEST/20261129/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + "0" * 64
)
"""A well-formed SigV4 Authorization header for raw HTTP requests (any
signature is accepted; the header's shape is what DynamoDB checks first)."""


def error_of(excinfo: pytest.ExceptionInfo[Any]) -> tuple[str, str]:
    """(error code, message) of a botocore ClientError."""
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")


KILL_LOAD_MAX_SECONDS = 20.0
"""How long a kill -9 test waits for its load to get going."""


def kill_9_under_load(
    process: subprocess.Popen[bytes],
    writers: list[threading.Thread],
    load_seconds: float,
    acknowledged: Callable[[], int],
    at_least: int,
) -> None:
    """Start ``writers``, let them load the server for ``load_seconds`` and
    until ``acknowledged()`` reaches ``at_least`` (a busy machine can spend
    the first second on the server's warm-up), then SIGKILL it and wait until
    every writer has noticed (each records only what the server acknowledged)."""
    for writer in writers:
        writer.start()
    time.sleep(load_seconds)
    deadline = time.monotonic() + KILL_LOAD_MAX_SECONDS
    while acknowledged() < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    for writer in writers:
        writer.join(timeout=15)
    assert not any(writer.is_alive() for writer in writers)


def children_of(pid: int) -> list[int]:
    """Direct children of process ``pid`` (from /proc; Linux)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except OSError:
            continue  # the process ended while we looked
    return found

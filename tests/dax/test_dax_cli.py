"""`dynastore serve`'s DAX options: $DYNASTORE_DAX_PORT, and a DAX port that
cannot be bound stops the server before it says it listens."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from tests.dax.conftest import free_port


def test_the_environment_variable_turns_the_endpoint_on() -> None:
    port = free_port()
    http_port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(http_port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "DYNASTORE_DAX_PORT": str(port)},
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline().decode() for _ in range(3)]
        assert lines[2].strip() == f"dax: dax://127.0.0.1:{port}"
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        process.terminate()
        process.communicate(timeout=10)
        assert process.stdout is not None
        process.stdout.close()


def test_a_taken_dax_port_is_an_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = subprocess.run(
            [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(free_port()),
             "--dax-port", str(port)], capture_output=True, text=True, timeout=60,
        )
    assert completed.returncode == 1
    assert f"the DAX port {port}" in completed.stderr
    assert "listening" not in completed.stdout

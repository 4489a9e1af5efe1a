"""``dynastore serve --postgres URL --workers N``: one port, N processes.

Over PostgreSQL a server keeps nothing that matters in its own memory
(docs/postgres.md), so several processes can serve one database side by
side exactly as several servers do (the two-server suite proves that). This
module runs them as one server: the first process (the one started) listens
with SO_REUSEPORT, starts N - 1 copies of itself on the port it bound, and
the kernel spreads new connections over the N listening sockets. A Python
process uses one core; the workers use the others (bench/README.md: GetItem
at 32 connections on 2 cores).

The copies are ``dynastore serve`` with the same arguments, minus the ports
only one process may serve (Redis, DAX) and with the first process's port;
``$DYNASTORE_WORKER_OF`` tells them whose worker they are. A worker that
dies is started again; a worker whose first process is gone (killed -9)
stops by itself. What stays per process is what stays per server
(docs/postgres.md "Many servers"): throughput token buckets, fault rules,
cached catalogue between notifications.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence

logger = logging.getLogger("dynastore")

WORKER_OF_VARIABLE = "DYNASTORE_WORKER_OF"
"""Set in a worker's environment: the process id of the process that started it."""

WORKERS_VARIABLE = "DYNASTORE_WORKERS"

ONE_PROCESS_OPTIONS = ("--workers", "--redis-port", "--dax-port", "--port")
"""Options (with a value) a worker does not inherit: the first process serves
Redis and DAX; every worker gets the bound port instead of the asked one."""

ONE_PROCESS_VARIABLES = ("DYNASTORE_REDIS_PORT", "DYNASTORE_DAX_PORT", WORKERS_VARIABLE)

RESTART_DELAY_SECONDS = 1.0
"""How long a dead worker stays down before it is started again (a worker
that cannot start does not spin)."""


def worker_of() -> int | None:
    """The first process's id when this process is one of its workers."""
    value = os.environ.get(WORKER_OF_VARIABLE)
    return int(value) if value and value.isdigit() else None


def worker_arguments(argv: Sequence[str], port: int) -> list[str]:
    """``dynastore serve`` arguments of a worker: ``argv`` without the
    options only the first process keeps, listening on ``port``."""
    kept: list[str] = []
    skip_value = False
    for argument in argv:
        if skip_value:
            skip_value = False
            continue
        name = argument.split("=", 1)[0]
        if name in ONE_PROCESS_OPTIONS:
            skip_value = "=" not in argument
            continue
        kept.append(argument)
    return [*kept, "--port", str(port)]


class WorkerProcesses:
    """The N - 1 workers the first process started, kept running until it stops."""

    def __init__(self, argv: Sequence[str], port: int, count: int) -> None:
        self.command = [sys.executable, "-m", "dynastore", *worker_arguments(argv, port)]
        self.environment = {
            name: value for name, value in os.environ.items() if name not in ONE_PROCESS_VARIABLES
        }
        self.environment[WORKER_OF_VARIABLE] = str(os.getpid())
        self.processes: list[subprocess.Popen[bytes]] = [self._spawn() for _ in range(count - 1)]
        self._down_since: dict[int, float] = {}

    def _spawn(self) -> subprocess.Popen[bytes]:
        # stdout stays quiet (the first process's lines say where the server
        # listens); log lines go where the first process's go.
        return subprocess.Popen(self.command, env=self.environment, stdout=subprocess.DEVNULL)

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def check(self) -> None:
        """Start again any worker that died (called about once a second)."""
        now = time.monotonic()
        for index, process in enumerate(self.processes):
            code = process.poll()
            if code is None:
                continue
            down_since = self._down_since.setdefault(index, now)
            if now - down_since < RESTART_DELAY_SECONDS:
                continue
            logger.warning("worker process %d exited with %s; starting another", process.pid, code)
            del self._down_since[index]
            self.processes[index] = self._spawn()

    def stop(self, timeout: float = 15.0) -> None:
        """Ask every worker to finish its requests and stop (SIGTERM), then wait."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + timeout
        for process in self.processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def first_process_gone(first_process: int) -> bool:
    """True when the process that started this worker is no longer its parent
    (it exited or was killed; this worker was handed to init)."""
    return os.getppid() != first_process

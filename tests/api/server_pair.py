"""Two ``dynastore serve --postgres URL`` servers over one database: the
module-scoped pair of tests/api/test_two_servers.py and
tests/api/test_catalogue_cas.py (each adds its own clients to ``ServerPair``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import boto3
from botocore.config import Config

from tests.api.conftest import TEST_CLIENT_CONFIG, server_log, start_server, stop_server

CLIENT_CONFIG = TEST_CLIENT_CONFIG.merge(Config(connect_timeout=5, read_timeout=20))
"""The suite's client settings (no validation, no retries), with timeouts
short enough that a server that stops answering fails the test in seconds."""


def make_client(url: str, config: Config = CLIENT_CONFIG, service: str = "dynamodb") -> Any:
    return boto3.client(service, endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", config=config)


@dataclass
class ServerPair:
    """The two servers (A first) and the database they share."""

    database_url: str
    processes: list[Any]
    urls: list[str]

    def logs(self, characters: int = 4000) -> str:
        """The end of both servers' logs, for an assertion's message."""
        return "\n".join(
            f"--- server {'AB'[i]} log (last {characters} characters) ---\n{server_log(p)[-characters:]}"
            for i, p in enumerate(self.processes)
        )


PairType = TypeVar("PairType", bound=ServerPair)


@contextmanager
def started_pair(database_url: str, kind: type[PairType]) -> Iterator[PairType]:
    """Start two servers over ``database_url`` (the first creates the schema,
    the second then finds it) as a ``kind``; stop both afterwards."""
    processes: list[Any] = []
    urls: list[str] = []
    try:
        for _ in range(2):
            process, url = start_server("--postgres", database_url)
            processes.append(process)
            urls.append(url)
        yield kind(database_url, processes, urls)
    finally:
        for process in processes:
            stop_server(process)

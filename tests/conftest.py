"""Fixtures shared by every test package: a throwaway PostgreSQL server.

``postgres_server`` starts one cluster per test session (per xdist worker),
from the machine's PostgreSQL binaries (tests/postgres_server.py). Without
them the tests that ask for it skip, except under CI=true, where they fail:
there .ci/run has installed Debian's postgresql package.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import postgres_server as throwaway


def skip_or_fail_without_postgres() -> None:
    if not throwaway.available():
        message = "PostgreSQL (initdb, pg_ctl) is not installed"
        if throwaway.required():
            pytest.fail(message + ", and CI=true requires the PostgreSQL tests to run")
        pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[throwaway.ThrowawayPostgres]:
    skip_or_fail_without_postgres()
    with throwaway.started_cluster() as server:
        yield server

"""A throwaway PostgreSQL server for tests and the benchmark.

``ThrowawayPostgres().start()`` runs Debian's (or any) ``initdb`` and
``pg_ctl`` in a temporary directory and listens on a free loopback port;
``stop()`` removes it all. PostgreSQL refuses to run as root, so when the
tests run as root the cluster belongs to the ``postgres`` user (which the
Debian package creates) or, failing that, ``nobody``.

The cluster is tuned for tests, not for durability of the *database
server*: ``fsync=off`` (a killed PostgreSQL could lose its last commits;
the tests kill dynastore servers, never this one, and stop it cleanly).

Without PostgreSQL's binaries on the machine the tests that need it skip,
except under ``CI=true``, where they must run (``.ci/run`` installs the
``postgresql`` package).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

START_TIMEOUT_SECONDS = 60


def binaries_directory() -> Path | None:
    """Where initdb and pg_ctl are: on PATH, else the newest of Debian's
    /usr/lib/postgresql/<version>/bin."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(os.path.realpath(on_path)).parent
    candidates = glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")
    if not candidates:
        return None
    newest = max(candidates, key=lambda path: int(Path(path).parent.parent.name.split(".")[0]))
    return Path(newest).parent


def available() -> bool:
    return binaries_directory() is not None


def required() -> bool:
    """Under CI the PostgreSQL tests must run, not skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_user() -> str | None:
    """The user the cluster runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root with neither a 'postgres' nor a 'nobody' user")


class ThrowawayPostgres:
    def __init__(self, settings: dict[str, str] | None = None) -> None:
        directory = binaries_directory()
        if directory is None:
            raise RuntimeError("PostgreSQL's initdb and pg_ctl were not found")
        self.bin = directory
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="dynastore-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.settings = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self.root),
            "fsync": "off",
            "full_page_writes": "off",
            "max_connections": "300",
            "shared_buffers": "128MB",
            "max_locks_per_transaction": "256",
            **(settings or {}),
        }
        if self.user is not None:
            record = pwd.getpwnam(self.user)
            os.chown(self.root, record.pw_uid, record.pw_gid)
            os.chmod(self.root, 0o700)

    def _run(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / arguments[0]), *arguments[1:]],
            user=self.user, capture_output=True, text=True, check=check, cwd=self.root,
        )

    def start(self) -> ThrowawayPostgres:
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                      "--no-sync", "-E", "UTF8", "--locale=C")
        options = " ".join(f"-c {name}={value}" for name, value in self.settings.items())
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
                  "-t", str(START_TIMEOUT_SECONDS), "-o", f"-p {self.port} {options}", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        """Stop (dropping every connection) and start again on the same port."""
        self.stop()
        self.start()

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", schema: str | None = None) -> str:
        url = f"postgresql://postgres@127.0.0.1:{self.port}/{database}"
        if schema is not None:
            url += "?options=" + quote(f"-csearch_path={schema}")
        return url

    def psql(self, statement: str, database: str = "postgres") -> str:
        completed = subprocess.run(
            [str(self.bin / "psql"), "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(self.port),
             "-U", "postgres", "-d", database, "-c", statement],
            capture_output=True, text=True, check=True,
        )
        return completed.stdout.strip()

    def end_backends_during_a_commit(self, database: str, call: Callable[[], object],
                                     join_seconds: float) -> bool:
        """Run ``call`` in a thread with every COMMIT of an item in
        ``database`` held by a deferred constraint trigger (pg_sleep), end
        the database's backends while a COMMIT is held there (libpq hands the
        FATAL error over where the pipeline's Sync is due), and return
        whether ``call`` was done within ``join_seconds``."""
        self.psql(
            "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_sleep(5); RETURN NULL; END $$", database)
        self.psql(
            "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR UPDATE ON dynastore_items "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()", database)
        thread = threading.Thread(target=call)
        thread.start()
        try:
            deadline = time.monotonic() + 20
            while self.psql("SELECT count(*) FROM pg_stat_activity "
                            f"WHERE datname = '{database}' AND wait_event = 'PgSleep'", database) != "1":
                if time.monotonic() > deadline:
                    raise AssertionError("no COMMIT was held by the trigger")
                time.sleep(0.05)
            self.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      f"WHERE datname = '{database}' AND pid <> pg_backend_pid()", database)
        finally:
            thread.join(timeout=join_seconds)
            self.psql("DROP TRIGGER slow_commit ON dynastore_items", database)
            self.psql("DROP FUNCTION slow_commit()", database)
        return not thread.is_alive()

    def new_database(self) -> str:
        """A new empty database; returns its URL."""
        name = f"dynastore_{uuid.uuid4().hex[:12]}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)

    def new_schema(self, database: str = "postgres") -> str:
        """A new empty schema in ``database``; returns a URL whose connections
        use it (search_path), so each test gets an empty store cheaply."""
        name = f"test_{uuid.uuid4().hex[:12]}"
        self.psql(f"CREATE SCHEMA {name}", database)
        return self.url(database, schema=name)


@contextmanager
def started_cluster() -> Iterator[ThrowawayPostgres]:
    """A throwaway cluster for a ``with`` block (a fixture's), removed after it."""
    server = ThrowawayPostgres().start()
    try:
        yield server
    finally:
        server.remove()


def wait_until(predicate: object, timeout_seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return True
        time.sleep(0.02)
    return False

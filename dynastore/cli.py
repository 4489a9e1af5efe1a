"""The ``dynastore`` command line.

    dynastore serve [--host 127.0.0.1] [--port 8000] [--data-dir DIR | --in-memory]
                    [--log-level info]
    dynastore export TABLE DIR [--format dynamodb-json|ion] [--at ISO_TIME]
                    (--endpoint URL | --data-dir DIR)
    dynastore backup TABLE | restore BACKUP_ARN NEW_TABLE ...   (dynastore/commands/)
    dynastore --version

``serve`` opens the database (SQLite in ``--data-dir``, by default
``./dynastore-data``, which survives restarts; or ``--in-memory``), listens,
prints one line saying where, and serves until SIGINT or SIGTERM: then it
stops accepting connections, lets requests in progress finish, closes the
database cleanly and exits 0.

Imports are kept lazy so the first request is answered quickly after start.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynastore import __version__
from dynastore.dax import dax_port_from

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.protocol.sigv4 import SignatureVerifier
    from dynastore.protocol.tls import TlsSettings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_DATA_DIR = "dynastore-data"
LOG_LEVELS = ("debug", "info", "warning", "error")

logger = logging.getLogger("dynastore")


OPERATIONS_PRELOAD_DELAY_SECONDS = 0.5


class CannotListen(Exception):
    """The server could not bind its address."""


class StorageFailed(Exception):
    """A COMMIT failed (disk full, I/O error): the server stopped itself."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynastore", description="A DynamoDB-compatible database."
    )
    parser.add_argument("--version", action="version", version=f"dynastore {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser("serve", help="serve DynamoDB's API over HTTP")
    serve.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (%(default)s)")
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port to listen on, 0 for any (%(default)s)"
    )
    storage = serve.add_mutually_exclusive_group()
    storage.add_argument(
        "--data-dir",
        default=None,
        help=f"directory of the SQLite store, created if missing ({DEFAULT_DATA_DIR})",
    )
    storage.add_argument(
        "--in-memory", action="store_true", help="keep everything in memory, lost on exit"
    )
    storage.add_argument(
        "--postgres",
        metavar="URL",
        default=None,
        help="keep everything in this PostgreSQL database (a libpq URL such as "
        "postgresql://user@127.0.0.1:5432/dynastore; also $DYNASTORE_POSTGRES), "
        "which several servers may share (docs/postgres.md)",
    )
    serve.add_argument("--log-level", choices=LOG_LEVELS, default="info")

    serve.add_argument(
        "--single-process",
        action="store_true",
        help="serve HTTP in the database's own process instead of a front process "
        "(uses one core; docs/adr/0003-http-front-process.md; always so with --postgres)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="with --postgres: serve the port from N processes, one per core you give it "
        "(default 1, or $DYNASTORE_WORKERS; docs/postgres.md)",
    )
    serve.add_argument(
        "--gsi-lag-ms",
        type=float,
        default=None,
        help="delay before a write reaches global secondary indexes, making DynamoDB's "
        "eventual consistency visible (default 0, or $DYNASTORE_GSI_LAG_MS)",
    )
    serve.add_argument(
        "--replication-lag-ms",
        type=float,
        default=None,
        help="how long a write to a global table takes to reach the other regions' replicas, on "
        "the database clock (default 1000, or $DYNASTORE_REPLICATION_LAG_MS; per region pair: "
        "/_dynastore/replication, docs/global-tables.md)",
    )
    serve.add_argument(
        "--throughput",
        choices=("off", "observe", "enforce"),
        default="off",
        help="enforce: throttle like DynamoDB (provisioned and on-demand limits, 3,000 RCU / "
        "1,000 WCU per partition); observe: count and report only (docs/throughput.md; "
        "default %(default)s)",
    )
    serve.add_argument(
        "--credentials", metavar="FILE", default=None,
        help="verify every request's SigV4 signature against the access keys in FILE, one "
        "ACCESS_KEY_ID:SECRET[:ACCOUNT_ID[:FLAGS]] a line (also $DYNASTORE_CREDENTIALS; "
        "docs/security.md); without it any signed request is accepted",
    )
    serve.add_argument(
        "--legacy-global-tables", action="store_true", default=False,
        help="make the legacy global-tables API (version 2017.11.29: CreateGlobalTable, "
        "UpdateGlobalTable...) work as documented (also $DYNASTORE_LEGACY_GLOBAL_TABLES=1); by "
        "default it is refused as today's DynamoDB refuses it (docs/global-tables.md)",
    )
    serve.add_argument(
        "--single-region", action="store_true", default=None,
        help="one namespace of tables for every region (also $DYNASTORE_SINGLE_REGION=1), "
        "for tools that disagree about the region; by default tables are per region",
    )
    serve.add_argument(
        "--tls-cert", metavar="FILE", default=None,
        help="serve HTTPS with this PEM certificate chain (with --tls-key; also "
        "$DYNASTORE_TLS_CERT; docs/adr/0007-tls.md)",
    )
    serve.add_argument(
        "--tls-key", metavar="FILE", default=None,
        help="the certificate's PEM private key, unencrypted (also $DYNASTORE_TLS_KEY)",
    )
    serve.add_argument(
        "--buckets-dir", metavar="DIR", default=None,
        help="folder that stands in for S3: bucket B is DIR/B, for ExportTableToPointInTime and "
        "ImportTable (default <data-dir>/buckets, or ./dynastore-buckets without a data dir)",
    )
    serve.add_argument(
        "--s3-endpoint", metavar="URL", default=None,
        help="write exports to and read imports from the buckets of this S3-compatible endpoint "
        "(boto3's S3 client, credentials from the AWS environment) instead of folders",
    )
    serve.add_argument(
        "--redis-port", type=int, default=None, metavar="PORT",
        help="also speak Redis's protocol (RESP2/RESP3) on this port, over the same store "
        "(also $DYNASTORE_REDIS_PORT; off by default; docs/redis.md)",
    )
    add_dax_options(serve)
    console = commands.add_parser(
        "console", help="serve the web console for any DynamoDB-compatible endpoint"
    )
    console.add_argument(
        "--endpoint", required=True,
        help="the DynamoDB endpoint URL (dynastore, DynamoDB Local, or real DynamoDB "
        "with the usual AWS credential chain)",
    )
    console.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (%(default)s)")
    console.add_argument("--port", type=int, default=8001, help="port to listen on (%(default)s)")
    console.add_argument("--region", default=None, help="AWS region (default: from the endpoint or the AWS config)")
    from dynastore.commands import add_commands

    add_commands(commands)  # backup, restore, export, import (dynastore/commands/)
    return parser


def add_dax_options(serve: argparse.ArgumentParser) -> None:
    """The DAX endpoint's options (dynastore/dax/, docs/dax.md)."""
    serve.add_argument(
        "--dax-port", type=int, default=None,
        help="also serve a DAX cluster endpoint on this port (dax://HOST:PORT, daxs:// with "
        "--tls-cert; also $DYNASTORE_DAX_PORT; off by default; docs/dax.md)",
    )
    serve.add_argument(
        "--dax-item-ttl-ms", type=float, default=None,
        help="the DAX item cache's TTL (default 300000, DAX's 5 minutes; 0 keeps items until "
        "the LRU bound evicts them, as DAX's record-ttl-millis 0)",
    )
    serve.add_argument(
        "--dax-query-ttl-ms", type=float, default=None,
        help="the DAX query cache's TTL (default 300000, DAX's 5 minutes; 0 caches no query)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    arguments.argv = list(sys.argv[1:] if argv is None else argv)
    """What a worker process is started with (dynastore/worker_processes.py)."""
    if arguments.command == "serve":
        return serve(arguments)
    if arguments.command == "console":
        from dynastore.console import run_console

        print(f"dynastore console on {listen_url(arguments.host, arguments.port)}/console "
              f"for {arguments.endpoint}", flush=True)
        try:
            run_console(arguments.endpoint, arguments.host, arguments.port, region=arguments.region)
        except KeyboardInterrupt:
            pass
        return 0
    from dynastore.commands import run

    code = run(arguments)
    if code is not None:
        return code
    parser.print_help(sys.stderr)
    return 2


def serve(arguments: argparse.Namespace) -> int:
    logging.basicConfig(
        level=arguments.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    location = store_location(arguments)
    shared = isinstance(location, str)
    """PostgreSQL: this server is one of many over one database; its engine
    runs many requests at once in greenlets (ADR 0005)."""
    from dynastore.protocol.tls import TlsConfigurationError, settings_from

    try:  # checked before anything listens (ADR 0007)
        tls = settings_from(arguments.tls_cert, arguments.tls_key)
    except TlsConfigurationError as error:
        print(f"dynastore: {error}", file=sys.stderr)
        return 1
    try:  # a bad credentials file stops the server before it listens
        security = security_settings(arguments)
    except ValueError as error:
        print(f"dynastore: {error}", file=sys.stderr)
        return 1
    try:
        workers = workers_from(arguments)
    except ValueError as error:
        print(f"dynastore: {error}", file=sys.stderr)
        return 1
    if workers > 1 and not shared:
        print("dynastore: --workers needs --postgres: a data directory or --in-memory store "
              "belongs to one process (docs/adr/0000-execution-model.md)", file=sys.stderr)
        return 1
    front: FrontProcess | None = None
    # Over PostgreSQL the engine serves HTTP itself: a hop to a front process
    # cost more than it saved there (bench/README.md, 2026-12-03: PutItem
    # 0.90x -> 1.22x dynalite in one process), and more cores are more
    # worker processes (--workers), not a front.
    if not arguments.single_process and not shared and front_process_supported():
        engine_connections = engine_connections_from_environment()
        # The front starts first, so its interpreter and imports overlap the
        # engine's (the engine serves every connection itself until it is up).
        try:
            front = FrontProcess.start(arguments.host, arguments.port, arguments.log_level, tls)
            front.engine_connections = engine_connections
        except CannotListen as error:  # the address is in use, or not ours to bind
            print(f"dynastore: cannot listen on {arguments.host}:{arguments.port}: {error}",
                  file=sys.stderr)
            return 1
        except OSError as error:  # the interpreter could not be started
            print(f"dynastore: cannot start the HTTP front process ({error}); "
                  "--single-process serves without it", file=sys.stderr)
            return 1

    try:
        database = open_database(location)
    except ImportError as error:  # psycopg is an extra
        print(f"dynastore: --postgres needs psycopg: pip install 'dynastore[postgres]' ({error})",
              file=sys.stderr)
        return 1
    except (OSError, RuntimeError) as error:
        # e.g. another dynastore holds the directory's lock, newer data, or
        # PostgreSQL cannot be reached.
        if front is not None:
            front.abandon()
        if isinstance(location, str):  # PostgreSQL: the error names the server
            print(f"dynastore: {error}", file=sys.stderr)
        else:
            print(f"dynastore: cannot open {location}: {error}", file=sys.stderr)
        return 1
    configure_buckets(database, arguments)
    if arguments.gsi_lag_ms is not None:
        database.gsi_lag_seconds = max(0.0, arguments.gsi_lag_ms / 1000)
    if arguments.replication_lag_ms is not None:
        from dynastore.replication.replicator import set_default_lag

        set_default_lag(max(0.0, arguments.replication_lag_ms / 1000))
    from dynastore.namespaces import Namespaces

    namespaces = Namespaces.of(database)
    namespaces.single_region = security.single_region
    if arguments.legacy_global_tables:
        from dynastore.replication.legacy import enable as enable_legacy

        enable_legacy(database)
    if arguments.throughput != "off":
        from dynastore.throughput import enable

        mode = arguments.throughput
        namespaces.on_open(lambda namespace: enable(namespace, mode))
    where = "in memory" if location is None else str(getattr(database.storage, "location", location))
    try:
        run_event_loop(
            serve_until_signalled(
                database, arguments.host, arguments.port, where, front, shared, tls,
                verifier=security.verifier, redis_port=redis_port_from(arguments),
                dax=arguments if dax_port_from(arguments) is not None else None,
                workers=workers, argv=arguments.argv,
            )
        )
    except CannotListen as error:
        print(f"dynastore: cannot listen on {arguments.host}:{arguments.port}: {error}", file=sys.stderr)
        return 1
    except StorageFailed as error:
        print(f"dynastore: stopped: the store could not commit ({error}); "
              "every acknowledged write is safe, restart to continue", file=sys.stderr)
        return 1
    finally:
        database.close()
    logger.info("stopped")
    return 0


REDIS_PORT_VARIABLE = "DYNASTORE_REDIS_PORT"


def redis_port_from(arguments: argparse.Namespace) -> int | None:
    """--redis-port, else $DYNASTORE_REDIS_PORT, else None (no Redis listener)."""
    if arguments.redis_port is not None:
        return int(arguments.redis_port)
    value = os.environ.get(REDIS_PORT_VARIABLE)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"dynastore: ${REDIS_PORT_VARIABLE} must be a port number, not {value!r}") from None


POSTGRES_VARIABLE = "DYNASTORE_POSTGRES"
CREDENTIALS_VARIABLE = "DYNASTORE_CREDENTIALS"
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class SecuritySettings:
    """Who may call the server (docs/security.md): a signature verifier
    over the credentials file's keys, or None (any signed request), and
    whether every region is one namespace."""

    def __init__(self, verifier: SignatureVerifier | None, single_region: bool) -> None:
        self.verifier = verifier
        self.single_region = single_region


def security_settings(arguments: argparse.Namespace) -> SecuritySettings:
    """From --credentials / $DYNASTORE_CREDENTIALS and --single-region /
    $DYNASTORE_SINGLE_REGION; a bad credentials file is a ValueError naming
    the file and line. Warns when the server is open to the network unverified."""
    from dynastore.namespaces import SINGLE_REGION_VARIABLE

    path = arguments.credentials or os.environ.get(CREDENTIALS_VARIABLE) or None
    single_region = arguments.single_region
    if single_region is None:
        single_region = os.environ.get(SINGLE_REGION_VARIABLE, "").lower() in ("1", "true", "yes", "on")
    verifier = None
    if path is not None:
        from dynastore.protocol.credentials import load_credentials
        from dynastore.protocol.sigv4 import SignatureVerifier

        keys = load_credentials(path)
        if not keys:
            raise ValueError(f"{path}: no access keys (one ACCESS_KEY_ID:SECRET a line)")
        verifier = SignatureVerifier(keys)
    elif arguments.host not in LOOPBACK_HOSTS:
        print(
            f"dynastore: warning: listening on {arguments.host} without --credentials: anyone who "
            "can reach this port can read and write every table (docs/security.md)",
            file=sys.stderr,
        )
    return SecuritySettings(verifier, bool(single_region))
def configure_buckets(database: Database, arguments: argparse.Namespace) -> None:
    """Where exports and imports find their S3 buckets (dynastore/backups/buckets.py)."""
    if arguments.buckets_dir is None and arguments.s3_endpoint is None:
        return  # the default folder, chosen on first use
    from dynastore.backups import buckets

    if arguments.s3_endpoint is not None:
        buckets.configure(database.storage, buckets.S3Buckets(arguments.s3_endpoint))
    else:
        buckets.configure(database.storage, buckets.LocalBuckets(Path(arguments.buckets_dir).resolve()))


def open_database(location: Path | str | None) -> Database:
    from dynastore.database import Database

    return Database.open(location)


def store_location(arguments: argparse.Namespace) -> Path | str | None:
    """Where the store is: None in memory, a PostgreSQL URL, or a data
    directory. A flag wins over $DYNASTORE_POSTGRES, which wins over the
    default data directory."""
    if arguments.in_memory:
        return None
    if arguments.postgres:
        return str(arguments.postgres)
    if arguments.data_dir is not None:
        return Path(arguments.data_dir).resolve()
    from_environment = os.environ.get(POSTGRES_VARIABLE)
    if from_environment:
        return from_environment
    return Path(DEFAULT_DATA_DIR).resolve()


ENGINE_CONNECTIONS_VARIABLE = "DYNASTORE_ENGINE_CONNECTIONS"


def engine_connections_from_environment() -> int:
    """How many connections the engine serves itself before handing them to
    the front (limits.HTTP_ENGINE_CONNECTIONS; 0 sends every one through the
    front, as the black-box tests do to cover that path)."""
    from dynastore import limits

    value = os.environ.get(ENGINE_CONNECTIONS_VARIABLE)
    if not value:
        return limits.HTTP_ENGINE_CONNECTIONS
    try:
        return max(0, int(value))
    except ValueError:
        raise SystemExit(
            f"dynastore: ${ENGINE_CONNECTIONS_VARIABLE} must be a whole number, not {value!r}"
        ) from None


def workers_from(arguments: argparse.Namespace) -> int:
    """--workers, else $DYNASTORE_WORKERS, else 1; a worker process is one."""
    from dynastore.worker_processes import WORKERS_VARIABLE, worker_of

    if worker_of() is not None:
        return 1
    value: Any = arguments.workers
    if value is None:
        value = os.environ.get(WORKERS_VARIABLE) or "1"
    try:
        count = int(value)
    except ValueError:
        raise ValueError(f"${WORKERS_VARIABLE} must be a whole number, not {value!r}") from None
    if count < 1:
        raise ValueError(f"--workers must be at least 1, not {count}")
    return count


def front_process_supported() -> bool:
    """The front process needs Unix sockets and descriptor passing (POSIX)
    and runs on epoll (protocol/reactor.py: Linux). Elsewhere (macOS, BSD)
    ``dynastore serve`` is one process, as with --single-process."""
    import select

    return os.name == "posix" and hasattr(socket, "AF_UNIX") and hasattr(select, "epoll")


class FrontProcess:
    """The listening sockets, and the front process started beside them."""

    def __init__(self, listening: list[socket.socket], process: subprocess.Popen[bytes],
                 link: socket.socket, handoff: socket.socket) -> None:
        self.listening = listening
        self.process = process
        self.link = link
        self.handoff = handoff
        self.engine_connections = 0
        """How many connections the engine serves itself ($DYNASTORE_ENGINE_CONNECTIONS)."""

    @classmethod
    def start(
        cls, host: str, port: int, log_level: str, tls: TlsSettings | None = None
    ) -> FrontProcess:
        from dynastore.protocol.engine import bind_listening_sockets, start_front

        try:
            listening = bind_listening_sockets(host, port)
        except OSError as error:
            raise CannotListen(str(error)) from error
        try:
            tls_files = None if tls is None else (tls.cert_path, tls.key_path)
            process, link, handoff = start_front(log_level, tls_files)
        except BaseException:
            for sock in listening:
                sock.close()
            raise
        return cls(listening, process, link, handoff)

    def abandon(self) -> None:
        """The engine could not start: stop the front at once."""
        for sock in (*self.listening, self.link, self.handoff):
            sock.close()
        self.process.kill()
        self.process.wait()


def run_event_loop(main_coroutine: Coroutine[Any, Any, None]) -> None:
    from dynastore.protocol.http import new_event_loop

    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main_coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()


def warm_up() -> None:
    """Import every operation, then move everything allocated so far (modules,
    the service model, parse tables) out of the garbage collector's sight:
    the cyclic collector then only walks what requests allocate."""
    from dynastore.ops import load_all

    load_all()
    gc.collect()
    gc.freeze()


def listen_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve_until_signalled(
    database: Database,
    host: str,
    port: int,
    where: str,
    front: FrontProcess | None = None,
    shared: bool = False,
    tls: TlsSettings | None = None,
    verifier: SignatureVerifier | None = None,
    redis_port: int | None = None,
    dax: argparse.Namespace | None = None,
    workers: int = 1,
    argv: Sequence[str] = (),
) -> None:
    from dynastore.protocol.engine import EngineServer
    from dynastore.protocol.server import Server
    from dynastore.worker_processes import WorkerProcesses, first_process_gone, worker_of

    server: Server | EngineServer
    if front is None:
        # PostgreSQL: requests in greenlets, statements batched (ADR 0005);
        # otherwise one at a time, with group commit (ADR 0002).
        server = Server(database, host, port, group_commit=not shared, pipelined=shared,
                        ssl_context=None if tls is None else tls.context)
    else:
        server = EngineServer(
            database, front.listening, front.process, front.link, front.handoff,
            engine_connections=front.engine_connections,
            ssl_context=None if tls is None else tls.context,
        )
    # The console (/console) is served beside the API and calls it in-process,
    # exactly as any client would (dynastore/console).
    from dynastore.backups.buckets import buckets_for
    from dynastore.console import with_console
    from dynastore.protocol.app import Application

    server.application = with_console(
        Application(database, verifier), region=database.region, require_signature=verifier is not None,
        buckets=buckets_for(database),
    )
    first_process = worker_of()
    server.reuse_port = workers > 1 or first_process is not None
    try:
        bound_host, bound_port = await server.start()
    except OSError as error:  # the address is in use, or not ours to bind
        raise CannotListen(str(error)) from error
    dax_server = None
    if dax is not None:  # the DAX endpoint beside the HTTP one (docs/dax.md)
        from dynastore.dax import start_dax

        try:
            dax_port = dax_port_from(dax)
            assert dax_port is not None
            dax_server = await start_dax(database, host, dax_port, server, tls, verifier,
                                         dax.dax_item_ttl_ms, dax.dax_query_ttl_ms)
        except OSError as error:
            await server.stop()
            raise CannotListen(f"the DAX port {dax_port_from(dax)}: {error}") from error
    stop_requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop_requested.set)
    server.on_failure = lambda error: stop_requested.set()
    # The workers start once this process listens (if it then fails to start,
    # a Redis port in use, they find it gone within a second and stop too).
    worker_processes = WorkerProcesses(argv, bound_port, workers) if workers > 1 else None
    if worker_processes is not None or first_process is not None:

        def watch_processes() -> None:
            """Once a second: start dead workers again; a worker whose first
            process is gone stops."""
            if worker_processes is not None:
                worker_processes.check()
            if first_process is not None and first_process_gone(first_process):
                logger.warning("the first process %d is gone: this worker stops", first_process)
                stop_requested.set()
            if not stop_requested.is_set():
                loop.call_later(1.0, watch_processes)

        loop.call_later(1.0, watch_processes)
    url = listen_url(bound_host, bound_port)
    if tls is not None:
        url = "https" + url.removeprefix("http")
    print(f"dynastore {__version__} listening on {url} (data: {where})", flush=True)
    print(f"console: {url}/console", flush=True)
    redis = None
    if redis_port is not None:  # the Redis protocol on this loop, over the same store (docs/redis.md)
        from dynastore.redis.server import RedisServer

        redis = RedisServer(database, group=getattr(server, "group", None),
                            access_keys=None if verifier is None else verifier.keys)
        try:
            redis_host, bound_redis_port = await redis.start(host, redis_port)
        except OSError as error:
            await server.stop()
            raise CannotListen(f"redis port {redis_port}: {error}") from error
        print(f"redis: redis://{redis_host}:{bound_redis_port}", flush=True)
    if dax_server is not None:
        print(f"dax: {dax_server.service.url}", flush=True)
    # Import the remaining operations once the first requests had their chance:
    # startup stays fast, and no later request pays for an import.
    loop.call_later(OPERATIONS_PRELOAD_DELAY_SECONDS, warm_up)
    # Background jobs, each a bounded step on this loop between requests (ADR 0000).
    from dynastore.backups.exports import ExportJobs
    from dynastore.backups.imports import ImportJobs
    from dynastore.backups.jobs import BackupJobs
    from dynastore.namespaces import Namespaces
    from dynastore.replication.pump import ReplicationPump
    from dynastore.streams_api.triggers import TriggerRunner
    from dynastore.workers.backfill import BackfillWatch
    from dynastore.workers.ttl_sweeper import SweeperSchedule

    jobs: list[Any] = []

    def start_jobs(namespace: Database) -> None:
        """Every namespace's background jobs, on this loop, as each opens."""
        namespace.background_loop = database.background_loop
        namespace.background_spawn = database.background_spawn
        jobs.append(SweeperSchedule(namespace, loop).start())
        jobs.append(TriggerRunner(namespace).start(loop))
        jobs.append(BackfillWatch(namespace, loop).start())  # a shared store: take over a dead server's
        jobs.append(BackupJobs(namespace, loop).start())  # backups, restores, PITR logs (docs/backups.md)
        jobs.append(ExportJobs(namespace, loop).start())  # ExportTableToPointInTime (docs/export-import.md)
        jobs.append(ImportJobs(namespace, loop).start())  # ImportTable's jobs (docs/import.md)
        jobs.append(ReplicationPump(namespace, loop).start())  # global tables (docs/global-tables.md)

    namespaces = Namespaces.of(database)
    namespaces.open_stored()
    namespaces.on_open(start_jobs)
    await stop_requested.wait()
    logger.info("stopping: finishing requests in progress")
    for job in jobs:
        job.stop()
    if redis is not None:
        await redis.stop()
    if dax_server is not None:
        await dax_server.stop()
    if worker_processes is not None:  # they finish their requests while this one does
        for process in worker_processes.processes:
            if process.poll() is None:
                process.terminate()
    await server.stop()
    if worker_processes is not None:
        worker_processes.stop()
    if server.failure is not None:
        raise StorageFailed(str(server.failure)) from server.failure

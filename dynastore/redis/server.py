"""The Redis listener, on the engine's event loop beside the HTTP server.

Each connection's commands run one at a time, to completion, on the loop
(ADR 0000), like the DynamoDB operations; on an exclusive store (memory,
SQLite) they join the server's group commit (protocol/group_commit.py): the
writes of one loop turn share one transaction, and a reply leaves only after
the COMMIT that made its command's writes durable, so an acknowledged write
survives kill -9. The replies of one read from a socket go out in one write.

On a shared store (PostgreSQL) one server at a time owns the keyspace, under
a lease (redis/lease.py); the others answer ``-LOADING`` until they take it
over. The owner writes the rows of a loop turn as one commit in a greenlet
on the store's hub (ADR 0005), one such commit at a time, and holds every
reply of the turn until it is in (ADR 0009 §7).
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.redis import resp
from dynastore.redis.commands import COMMANDS, load_all
from dynastore.redis.commands.common import Command
from dynastore.redis.keyspace import Entry, Keyspace
from dynastore.redis.lease import Lease
from dynastore.redis.resp import Error, Parser, ProtocolError

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.protocol.group_commit import GroupCommit

logger = logging.getLogger("dynastore.redis")

BLOCKED: Any = object()
"""A blocking command's answer when it must wait (the client is parked)."""

LOADING = Error("LOADING Redis is loading the dataset in memory")
"""Every command's reply while this server does not serve the keyspace (a
standby, a take-over loading, a reload after a failed commit): Redis's own
reply while it loads, which redis-py raises as BusyLoadingError, a
ConnectionError its retries cover."""
LOADING_ALLOWED = frozenset((b"auth", b"hello", b"info", b"config", b"command", b"client", b"quit",
                             b"reset", b"select"))
"""The commands Redis 7.0 runs while it loads (its ``loading`` flag) that
touch no key: connecting (redis-py's HELLO, AUTH, CLIENT SETINFO) and INFO
(``loading:1``) work on a standby; everything else answers -LOADING."""
NOT_COMMITTED = b"-ERR the store could not commit this command's writes; it may not have been applied: retry\r\n"
"""A reply held for a commit that failed: the command's outcome is unknown."""

MULTI_ALLOWED = frozenset(("exec", "discard", "multi", "watch", "quit", "reset"))
AUTH_FREE = frozenset(("auth", "hello", "quit", "reset"))
SUBSCRIBED_ALLOWED = frozenset(
    ("subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ping", "quit", "reset")
)


class Stats:
    """INFO's counters (CONFIG RESETSTAT zeroes them)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total_commands_processed = 0
        self.total_connections_received = 0
        self.expired_keys = 0
        self.keyspace_hits = 0
        self.keyspace_misses = 0
        self.rejected_connections = 0
        self.reset_at = time.time()
        self.commands: dict[str, list[float]] = {}
        """Per command: [calls, microseconds, failed calls] (INFO commandstats, metrics)."""
        self.key_operations: dict[bytes, int] = {}
        """Operations per key in the current window (the hot-key view)."""
        self.previous_key_operations: dict[bytes, int] = {}
        self.window_started = time.monotonic()
        self.previous_window_started = self.window_started

    def rotate_windows(self, now: float) -> None:
        """Start a new hot-key window: rates cover the last one or two windows."""
        self.previous_key_operations = self.key_operations
        self.key_operations = {}
        self.previous_window_started = self.window_started
        self.window_started = now

    def key_rates(self) -> list[tuple[bytes, int, float]]:
        """(key, operations, operations per second) over the last windows, hottest first."""
        seconds = max(1.0, time.monotonic() - self.previous_window_started)
        counts = dict(self.previous_key_operations)
        for key, count in self.key_operations.items():
            counts[key] = counts.get(key, 0) + count
        ranked = sorted(counts.items(), key=lambda pair: pair[1], reverse=True)
        return [(key, count, count / seconds) for key, count in ranked]


class Client:
    """One connection's state."""

    def __init__(self, server: RedisServer, client_id: int, connection: RedisConnection | None) -> None:
        self.server = server
        self.id = client_id
        self.connection = connection
        self.db = 0
        self.protocol = 2
        self.name = b""
        self.address = ""
        self.local_address = ""
        self.created = time.time()
        self.last_command = "NULL"
        self.multi: list[tuple[Command, list[bytes]]] | None = None
        self.multi_failed = False
        self.watched: set[tuple[int, bytes]] = set()
        self.dirty = False
        """A watched key changed: the next EXEC fails."""
        self.channels: set[bytes] = set()
        self.patterns: set[bytes] = set()
        self.blocked: Blocked | None = None
        self.backlog: deque[list[bytes]] = deque()
        """Commands that arrived while the client was blocked."""
        self.closing = False
        self.authenticated = False
        self.in_exec = False
        """Running EXEC's commands: a blocking command answers at once."""
        self.readonly = False
        """Authenticated with a readonly access key: write commands are refused."""
        self.user = "default"
        self.current: tuple[Command, list[bytes]] = (COMMANDS["ping"], [b"PING"])
        """The command running (what a blocking command parks)."""
        """Running EXEC's commands: a blocking command answers at once."""

    @property
    def subscriptions(self) -> int:
        return len(self.channels) + len(self.patterns)


class Blocked:
    """What a blocked client waits for: its command, the keys, the timer."""

    __slots__ = ("argv", "command", "keys", "timer", "db")

    def __init__(self, argv: list[bytes], command: Command, keys: list[bytes], db: int) -> None:
        self.argv = argv
        self.command = command
        self.keys = keys
        self.db = db
        self.timer: asyncio.TimerHandle | None = None


class RedisServer:
    """The Redis side of one Database: keyspace, clients, blocking, expiry."""

    def __init__(self, database: Database, group: GroupCommit | None = None,
                 lock: AbstractContextManager[Any] | None = None,
                 access_keys: Mapping[str, Any] | None = None) -> None:
        """``lock``: held while commands run (the embedded database's, which its
        in-process DynamoDB clients take too); None on the server's own loop."""
        load_all()
        self.lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self.access_keys = access_keys
        """--credentials' keys: AUTH takes an access key id and its secret (docs/redis.md)."""
        self.database = database
        self.group = group
        self.turn_group: GroupCommit | None = None
        """The group a connection's commands run in (set while they run): the
        first command that may write joins it (redis/server.py, ``run``)."""
        self.keyspace = Keyspace(database, limits.REDIS_DATABASES)
        self.keyspace.on_change = self._key_changed
        self.lease: Lease | None = None
        """A shared store's lease (redis/lease.py); None on an exclusive store."""
        self.serving = True
        """This server owns the keyspace and it is loaded (else: -LOADING)."""
        self._held: list[tuple[RedisConnection, bytes, bool, int]] = []
        """Shared store: (connection, data, keep_alive, replies) waiting for the next commit."""
        self._flushing = False
        self._flush_scheduled = False
        self._lease_busy = False
        self._lease_failures = 0
        """Asks for the lease in a row that could not reach the store (the polls back off)."""
        self._lease_timer: asyncio.TimerHandle | None = None
        self._announced = ""
        self._hub: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._first_take: asyncio.Future[None] | None = None
        if database.storage.exclusive:
            self.keyspace.open()
        else:
            self.lease = Lease(database)
            self.serving = False
            self._hub = getattr(database.storage, "hub", None)
        if group is not None:  # rows written once a turn, just before the group's COMMIT
            group.before_commit.append(self._flush_before_commit)
        self.stats = Stats()
        self.clients: dict[int, Client] = {}
        self._next_client_id = 1
        self.config: dict[str, str] = {}
        from dynastore.redis.commands.server import default_config

        self.config.update(default_config())
        self.started = time.time()
        self.last_save = int(time.time())
        self.waiting: dict[tuple[int, bytes], deque[Client]] = {}
        """Blocked clients per (db, key), in the order they blocked."""
        self.ready: list[tuple[int, bytes]] = []
        self._names: dict[bytes, tuple[str, Command]] = {}
        """Command names as clients spell them (GET, get, Get) -> the command."""
        self.frozen_ms: int | None = None
        """The time EXEC started, while it runs (keys do not expire in the middle)."""
        self._serving = False
        self.deferring = False
        """EXEC runs: blocked clients are served after it, not between its commands."""
        self.watching: dict[tuple[int, bytes], set[Client]] = {}
        self.channels: dict[bytes, set[Client]] = {}
        self.patterns: dict[bytes, set[Client]] = {}
        self.servers: list[asyncio.AbstractServer] = []
        self.sweeper: asyncio.TimerHandle | None = None
        self.port = 0
        from dynastore.redis.admin import register

        register(self)
        if self.lease is not None and self._hub is None:  # the embedded API: take it now or fail
            self._take_lease()
            if not self.serving:
                raise RuntimeError("the Redis keyspace of this database is served by another server")

    # --- listening --------------------------------------------------------------------
    async def start(self, host: str, port: int) -> tuple[str, int]:
        from dynastore.protocol.engine import bind_listening_sockets

        loop = asyncio.get_running_loop()
        if self.lease is not None and self._hub is not None:
            # The first ask for the lease before listening: an owner listens
            # with its keyspace loaded, a standby answers -LOADING.
            self._loop = loop
            first = self._first_take = loop.create_future()
            self._poll_lease()
            await first
        for sock in bind_listening_sockets(host, port):
            self.servers.append(await loop.create_server(lambda: RedisConnection(self), sock=sock))
        address = self.servers[0].sockets[0].getsockname()  # type: ignore[attr-defined]
        self.port = int(address[1])
        self.sweeper = loop.call_later(limits.REDIS_EXPIRE_SWEEP_SECONDS, self._sweep)
        return str(address[0]), self.port

    async def stop(self) -> None:
        if self.sweeper is not None:
            self.sweeper.cancel()
        if self._lease_timer is not None:
            self._lease_timer.cancel()
            self._lease_timer = None
        for server in self.servers:
            server.close()
        if self.lease is not None:  # the last turn's commit, and its replies, before the clients go
            deadline = time.monotonic() + limits.REDIS_STOP_COMMIT_SECONDS
            while (self._flushing or self._held or self.keyspace.pending) and time.monotonic() < deadline:
                self._schedule_flush()
                await asyncio.sleep(0.01)
        self._loop = None
        for client in list(self.clients.values()):
            if client.connection is not None:
                client.connection.close()
        for server in self.servers:
            await server.wait_closed()

    def new_client(self, connection: RedisConnection | None) -> Client:
        client = Client(self, self._next_client_id, connection)
        self._next_client_id += 1
        self.clients[client.id] = client
        self.stats.total_connections_received += 1
        return client

    def forget_client(self, client: Client) -> None:
        self.clients.pop(client.id, None)
        self.unblock(client)
        self.unwatch(client)
        from dynastore.redis.commands.pubsub import unsubscribe_all

        unsubscribe_all(self, client)

    # --- time and expiry --------------------------------------------------------------
    def now_ms(self) -> int:
        """The database clock in milliseconds; frozen while EXEC runs, as
        Redis 7.0 samples the time once for a whole transaction."""
        if self.frozen_ms is not None:
            return self.frozen_ms
        return int(self.database.now() * 1000)

    def expire_now(self, db: int, key: bytes, entry: Entry) -> None:
        """The key's time is up: delete it (rows too), count it."""
        if self.keyspace.dbs[db].get(key) is entry:
            del self.keyspace.dbs[db][key]
            self.keyspace.deleted_key(db, key, entry)
            self.stats.expired_keys += 1

    def _sweep(self) -> None:
        """Active expiry: delete keys whose time is up, a bounded number a run."""
        loop = asyncio.get_running_loop()
        self.sweeper = loop.call_later(limits.REDIS_EXPIRE_SWEEP_SECONDS, self._sweep)
        with self.lock:
            self._sweep_step()

    def _sweep_step(self) -> None:
        moment = time.monotonic()
        if moment - self.stats.window_started >= limits.REDIS_HOT_KEY_WINDOW_SECONDS:
            self.stats.rotate_windows(moment)
        if not self.serving:
            return
        heap = self.keyspace.deadlines
        if not heap or heap[0][0] > self.now_ms():
            return
        if self.group is not None:
            try:
                self.group.join()
            except Exception:  # the store is busy: try again next run
                logger.warning("the expiry sweep could not begin a transaction")
                return
        now = self.now_ms()
        dbs = self.keyspace.dbs
        for _ in range(limits.REDIS_EXPIRE_SWEEP_KEYS):
            if not heap or heap[0][0] > now:
                break
            expire_ms, db, key = heapq.heappop(heap)
            entry = dbs[db].get(key)
            if entry is not None and entry.expire_ms == expire_ms:
                self.expire_now(db, key, entry)
        self.finish_command()

    # --- change hooks: WATCH and blocked clients -------------------------------------
    def _key_changed(self, db: int, key: bytes) -> None:
        if self.watching:
            watchers = self.watching.get((db, key))
            if watchers:
                for client in watchers:
                    client.dirty = True
        if self.waiting and (db, key) in self.waiting:
            self.ready.append((db, key))

    def touch_all(self, db: int | None) -> None:
        """FLUSHDB / FLUSHALL / SWAPDB: every watcher of those databases is dirty."""
        for (watched_db, _), clients in self.watching.items():
            if db is None or watched_db == db:
                for client in clients:
                    client.dirty = True

    def unwatch(self, client: Client) -> None:
        for watched in client.watched:
            clients = self.watching.get(watched)
            if clients is not None:
                clients.discard(client)
                if not clients:
                    del self.watching[watched]
        client.watched.clear()
        client.dirty = False

    # --- executing -------------------------------------------------------------------------
    def execute(self, client: Client, argv: list[bytes]) -> Any:
        """One command's reply (an Error for a refusal); its writes are flushed."""
        started = time.perf_counter()
        if not self.serving and argv[0].lower() not in LOADING_ALLOWED:
            return LOADING
        known = self._names.get(argv[0])
        if known is None:
            name = argv[0].lower().decode(errors="replace")
            command = COMMANDS.get(name)
            if command is None:
                return self._unknown(client, argv)
            if len(self._names) < limits.REDIS_COMMAND_SPELLINGS_CACHED:
                self._names[argv[0]] = (name, command)
        else:
            name, command = known
        arity = command.arity
        count = len(argv)
        if (count != arity) if arity > 0 else (count < -arity):
            return self._refuse(client, Error(f"ERR wrong number of arguments for '{name}' command"))
        if command.subcommands:
            sub = command.subcommands.get(argv[1].lower().decode(errors="replace"))
            if sub is None:
                return self._refuse(client, Error(
                    f"ERR unknown subcommand '{argv[1][:128].decode(errors='replace')}'. "
                    f"Try {argv[0].decode(errors='replace').upper()} HELP."))
            if (count != sub.arity) if sub.arity > 0 else (count < -sub.arity):
                return self._refuse(client, Error(
                    f"ERR wrong number of arguments for '{sub.name}' command"))
            command = sub
        if not client.authenticated and name not in AUTH_FREE and (
                self.access_keys is not None or self.config.get("requirepass")):
            return self._refuse(client, Error("NOAUTH Authentication required."))
        if client.readonly and command.writes:
            return self._refuse(client, Error(
                f"NOPERM this user has no permissions to run the '{command.name}' command"))
        if client.multi is not None and name not in MULTI_ALLOWED:
            client.multi.append((command, argv))
            return resp.QUEUED
        if (client.channels or client.patterns) and client.protocol == 2 and name not in SUBSCRIBED_ALLOWED:
            return Error(f"ERR Can't execute '{command.name}': only (P|S)SUBSCRIBE / "
                         "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
        return self.run(client, command, argv, started)

    def run(self, client: Client, command: Command, argv: list[bytes], started: float | None = None) -> Any:
        if started is None:
            started = time.perf_counter()
        failed = 0
        client.current = (command, argv)
        group = self.turn_group
        if group is not None and not group.is_open and (command.writes or command.name == "exec"):
            # The keyspace is in memory: a turn that only reads needs no
            # transaction (BEGIN IMMEDIATE and COMMIT cost ~19 us on SQLite).
            # A write joins the group, so its rows, and an EXEC's, commit
            # with the turn; a read that writes anyway (a key expiring on
            # access) commits its rows on its own (finish_command).
            try:
                group.join()
            except Exception:
                logger.exception("could not begin the group's transaction")
                return Error("ERR internal error")
        try:
            reply = command.handler(self, client, argv)
        except Error as error:
            reply = error
            failed = 1
        except Exception:
            logger.exception("redis command %s failed", command.name)
            reply = Error("ERR internal error")
            failed = 1
        self.finish_command()
        client.last_command = command.name
        stats = self.stats
        stats.total_commands_processed += 1
        counters = stats.commands.get(command.name)
        if counters is None:
            counters = stats.commands[command.name] = [0, 0.0, 0]
        counters[0] += 1
        counters[1] += (time.perf_counter() - started) * 1e6
        counters[2] += failed
        if command.first_key > 0 and len(argv) > command.first_key:
            operations = stats.key_operations
            key = argv[command.first_key]
            operations[key] = operations.get(key, 0) + 1
            if len(operations) > limits.REDIS_HOT_KEYS_TRACKED:
                _halve(operations)
        return reply

    def finish_command(self) -> None:
        """Flush the command's rows (inside an open group: once, before its
        COMMIT), then serve blocked clients whose keys got ready."""
        if self.lease is not None:
            if self.keyspace.pending:
                if self._hub is not None:
                    self._schedule_flush()
                else:
                    self._flush_now()
        else:
            group = self.group
            if group is None or not group.is_open:
                self.keyspace.flush()
        if self.ready:
            self._serve_ready()

    def _flush_before_commit(self) -> None:
        try:
            self.keyspace.flush()
        except Exception:  # the COMMIT fails next and the server stops (group_commit.py)
            logger.exception("the Redis keyspace could not write its rows")
            self.keyspace.discard_pending()

    def hold(self, connection: RedisConnection, data: bytes, keep_alive: bool = True, replies: int = 1) -> None:
        """Send ``data`` once what it depends on is durable (group commit; on
        a shared store the turn's commit). ``replies``: how many replies it
        holds (each becomes an error if that commit fails; 0: sent as it is)."""
        if self._hub is not None:
            if not self._flushing and not self._held and not self.keyspace.pending:
                connection.send(data, keep_alive)
                return
            self._held.append((connection, data, keep_alive, replies))
            self._schedule_flush()
            return
        group = self.group
        if group is not None:
            group.hold(connection, data, keep_alive, wrote=self.keyspace.pending)  # type: ignore[arg-type]
        else:
            connection.send(data, keep_alive)

    def _unknown(self, client: Client, argv: list[bytes]) -> Error:
        args = ""
        for argument in argv[1:]:
            if len(args) >= 128:
                break
            args += "'" + argument.decode(errors="replace")[: 128 - len(args)] + "' "
        name = argv[0][:128].decode(errors="replace")
        return self._refuse(client, Error(f"ERR unknown command '{name}', with args beginning with: {args}"))

    def _refuse(self, client: Client, error: Error) -> Error:
        if client.multi is not None:
            client.multi_failed = True
        return error

    # --- blocking ------------------------------------------------------------------------------
    def block(self, client: Client, keys: list[bytes], timeout: float) -> Any:
        """Park the client until one of ``keys`` is ready or ``timeout`` seconds
        pass (0: never); a client retried while blocked stays parked as it was."""
        if client.blocked is not None:
            return BLOCKED
        command, argv = client.current
        blocked = Blocked(argv, command, keys, client.db)
        client.blocked = blocked
        for key in keys:
            self.waiting.setdefault((client.db, key), deque()).append(client)
        if timeout > 0:
            blocked.timer = asyncio.get_running_loop().call_later(timeout, self._timed_out, client)
        return BLOCKED

    def unblock(self, client: Client) -> None:
        blocked = client.blocked
        if blocked is None:
            return
        client.blocked = None
        if blocked.timer is not None:
            blocked.timer.cancel()
        for key in blocked.keys:
            queue = self.waiting.get((blocked.db, key))
            if queue is not None:
                try:
                    queue.remove(client)
                except ValueError:
                    pass
                if not queue:
                    del self.waiting[(blocked.db, key)]

    def _timed_out(self, client: Client) -> None:
        with self.lock:
            self._time_out(client)

    def _time_out(self, client: Client) -> None:
        blocked = client.blocked
        if blocked is None:
            return
        blocked.timer = None
        self.unblock(client)
        if client.connection is not None:
            self.send(client, resp.encode_one(_timeout_reply(blocked.command), client.protocol), replies=1)
            client.connection.resume()

    def _serve_ready(self) -> None:
        """Retry the commands of clients blocked on keys that changed, oldest
        first (after the command, or the whole EXEC, that changed them). A key
        deleted, or now of another type, leaves them blocked, as in Redis 7.0."""
        if self._serving or self.deferring:
            return
        self._serving = True
        try:
            while self.ready:
                ready, self.ready = self.ready, []
                for db, key in ready:
                    self._serve_key(db, key)
        finally:
            self._serving = False

    def _serve_key(self, db: int, key: bytes) -> None:
        queue = self.waiting.get((db, key))
        while queue:
            client = queue[0]
            blocked = client.blocked
            if blocked is None:
                queue.popleft()
                continue
            saved_db = client.db
            client.db = blocked.db
            try:
                reply = self.run(client, blocked.command, blocked.argv)
            finally:
                client.db = saved_db
            if reply is BLOCKED or (type(reply) is Error and reply.message.startswith("WRONGTYPE")):
                return  # the oldest still waits: nobody behind it goes first
            self.unblock(client)
            if client.connection is not None:
                self.send(client, resp.encode_one(reply, client.protocol), replies=1)
                asyncio.get_running_loop().call_soon(client.connection.resume)
            queue = self.waiting.get((db, key))

    # --- sending ---------------------------------------------------------------------------------
    def send(self, client: Client, data: bytes, replies: int = 0) -> None:
        """Send outside the client's own command batch (a wake-up, a pub/sub message),
        behind whatever the group holds; ``replies`` as for ``hold``."""
        connection = client.connection
        if connection is not None:
            self.hold(connection, data, replies=replies)

    # --- a shared store: the lease, the turn's commit -------------------------------------
    def _poll_lease(self) -> None:
        """Every REDIS_LEASE_POLL_SECONDS: a standby asks for the lease; the
        owner checks it still has it (each in a greenlet of the hub)."""
        self._lease_timer = None
        loop = self._loop
        if loop is None:
            return
        delay = limits.REDIS_LEASE_CHECK_SECONDS if self.serving else min(
            limits.REDIS_LEASE_POLL_MAX_SECONDS, limits.REDIS_LEASE_POLL_SECONDS * 2 ** self._lease_failures)
        self._lease_timer = loop.call_later(delay, self._poll_lease)
        if self._lease_busy:
            return
        self._lease_busy = True
        self._hub.spawn(self._check_lease if self.serving else self._take_lease)

    def _take_lease(self) -> None:
        """Take the keyspace over if its lease is free: the fence row, then
        every key loaded from the rows (commands get -LOADING meanwhile)."""
        lease = self.lease
        assert lease is not None
        try:
            locked = lease.try_lock()
            self._lease_failures = 0  # the store answered
            if not locked:
                self._announce("standby, the keyspace is served by another server")
                return
            keyspace = Keyspace(self.database, limits.REDIS_DATABASES)
            keyspace.open_tables()
            lease.claim(keyspace.heads_id)
            keyspace.load()
        except Exception as error:  # PostgreSQL is unreachable: try again at the next poll
            logger.warning("could not take the Redis keyspace over: %s", error)
            self._lease_failures = min(self._lease_failures + 1, 8)
            lease.give_up()
            self._announce("standby, the store is unavailable")
            return
        finally:
            self._lease_busy = False
            first, self._first_take = self._first_take, None
            if first is not None and not first.done():
                first.set_result(None)
        keyspace.on_change = self._key_changed
        self.keyspace = keyspace
        self.serving = True
        self.touch_all(None)
        self._announce(f"serving the keyspace ({sum(map(len, keyspace.dbs))} keys loaded)")
        if self.waiting:  # clients blocked before: their keys may be ready now
            self.ready.extend(self.waiting)
            self._serve_ready()

    def _check_lease(self) -> None:
        lease = self.lease
        assert lease is not None
        try:
            owned = lease.still_owned()
        except Exception:  # unreachable: the next commit, or the next check, tells
            return
        finally:
            self._lease_busy = False
        if not owned and self.serving:
            self._step_down("another server took the keyspace over")

    def _announce(self, state: str) -> None:
        """One line per change of state (the standby's is printed once)."""
        if state != self._announced:
            self._announced = state
            if self._hub is None:  # the embedded API: the application's stdout is not ours
                logger.info("redis: %s", state)
            else:
                print(f"redis: {state}", flush=True)

    def _step_down(self, reason: str, state: str = "standby") -> None:
        """Stop serving: the memory may be behind or ahead of the store. The
        lease is given up; the next poll asks for it again (and reloads)."""
        logger.warning("not serving the Redis keyspace: %s", reason)
        self.serving = False
        if self.lease is not None:
            self.lease.give_up()
        self.keyspace.discard_pending()
        self.keyspace = Keyspace(self.database, limits.REDIS_DATABASES)
        self.keyspace.on_change = self._key_changed
        self.touch_all(None)
        self._announce(f"{state} ({reason})")

    def _schedule_flush(self) -> None:
        """Commit the turn's rows once the turn ends (one commit in flight at a time)."""
        if self._flushing or self._flush_scheduled or self._loop is None:
            return
        self._flush_scheduled = True
        self._loop.call_soon(self._start_flush)

    def _start_flush(self) -> None:
        self._flush_scheduled = False
        if self._flushing or (not self._held and not self.keyspace.pending):
            return
        replies, self._held = self._held, []
        self._flushing = True
        keyspace = self.keyspace
        fence = self.lease.fence() if self.lease is not None and self.serving else None

        def commit() -> None:
            failure: BaseException | None = None
            try:
                if fence is None and keyspace.pending:
                    keyspace.discard_pending()
                    raise RuntimeError("the keyspace is not this server's any more")
                keyspace.flush(fence or ())  # takes the rows at once, before it parks
            except Exception as error:
                failure = error
            self._flushed(keyspace, replies, failure)

        self._hub.spawn(commit)

    def _flushed(self, keyspace: Keyspace, replies: list[tuple[RedisConnection, bytes, bool, int]],
                 failure: BaseException | None) -> None:
        """The turn's commit is in (send its replies) or failed (each reply
        an error, and those behind it, whose commands read its changes)."""
        self._flushing = False
        if failure is not None:
            logger.warning("a commit of the Redis keyspace's rows failed: %s", failure)
            replies += self._held
            self._held = []
        for connection, data, keep_alive, count in replies:
            if failure is not None and count:
                data = NOT_COMMITTED * count
            connection.send(data, keep_alive)
        if failure is not None:
            if keyspace is self.keyspace and self.serving:
                self._step_down("a commit failed", "reloading the keyspace from the store")
            if self._loop is not None and self._lease_timer is not None:
                self._lease_timer.cancel()
                self._lease_timer = self._loop.call_soon(self._poll_lease)  # type: ignore[assignment]
            return
        if self._held or self.keyspace.pending:
            self._schedule_flush()

    def _flush_now(self) -> None:
        """No hub (the embedded API over PostgreSQL): the command's rows now."""
        assert self.lease is not None
        try:
            self.keyspace.flush(self.lease.fence())
        except Exception:
            logger.exception("a commit of the Redis keyspace's rows failed")
            self._step_down("a commit failed")


def _timeout_reply(command: Command) -> Any:
    """BLMOVE and BRPOPLPUSH time out with a null bulk, the others a null array."""
    if command.name in ("blmove", "brpoplpush"):
        return None
    return resp.NULL_ARRAY


def _halve(counts: dict[bytes, int]) -> None:
    """Keep the hot-key table bounded: drop the cold half, halve the rest (decay).
    Keys seen once are the cold ones when there are enough of them (many keys
    touched once each: one pass, no sort)."""
    once = [key for key, count in counts.items() if count == 1]
    if len(once) >= len(counts) // 2:
        for key in once:
            del counts[key]
        for key in counts:
            counts[key] //= 2
        return
    ranked = sorted(counts.items(), key=lambda pair: pair[1], reverse=True)
    counts.clear()
    for key, count in ranked[: len(ranked) // 2]:
        counts[key] = count // 2


class RedisConnection(asyncio.Protocol):
    """One client's socket: parse, run, reply (in one write per read)."""

    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.parser = Parser()
        self.transport: asyncio.Transport | None = None
        self.client: Client | None = None
        self.reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if len(self.server.clients) >= limits.REDIS_MAX_CLIENTS:
            self.server.stats.rejected_connections += 1
            transport.write(b"-ERR max number of clients reached\r\n")  # type: ignore[attr-defined]
            transport.close()
            return
        with self.server.lock:
            client = self.server.new_client(self)
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        client.address = _address(peer)
        client.local_address = _address(local)
        self.client = client

    def data_received(self, data: bytes) -> None:
        client = self.client
        if client is None or client.closing:
            return
        try:
            commands = self.parser.feed(data)
        except ProtocolError as error:
            self._write(resp.encode_one(Error("ERR " + str(error)), client.protocol))
            self.close()
            return
        client.backlog.extend(commands)
        if client.blocked is None:
            self.run_backlog()

    def run_backlog(self) -> None:
        """Run the commands that wait, until the client blocks or closes; one reply write."""
        client = self.client
        if client is None:
            return
        server = self.server
        out: list[bytes] = []
        backlog = client.backlog
        count = 0
        with server.lock:
            turn_group, server.turn_group = server.turn_group, server.group
            try:
                while backlog and client.blocked is None and not client.closing:
                    reply = server.execute(client, backlog.popleft())
                    if reply is BLOCKED:
                        break
                    resp.encode(reply, client.protocol, out)
                    count += 1
            finally:
                server.turn_group = turn_group
        if out:
            server.hold(self, b"".join(out), replies=count)
        if client.closing:
            server.hold(self, b"", False, replies=0)

    def resume(self) -> None:
        """The client was unblocked: run what arrived meanwhile."""
        client = self.client
        if client is not None and client.blocked is None and client.backlog:
            self.run_backlog()

    def send(self, data: Any, keep_alive: bool) -> None:
        """A reply ready to leave (the group's sink interface)."""
        if type(data) is tuple:  # the group's COMMIT failed: InternalServerError
            data = b"-ERR internal error: the store could not commit\r\n"
            keep_alive = False
        if data:
            self._write(data)
        if not keep_alive:
            self.close()

    def _write(self, data: bytes) -> None:
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.client is not None:
            self.client.closing = True
            self.client.connection = None
            with self.server.lock:
                self.server.forget_client(self.client)
        self.transport = None

    def pause_writing(self) -> None:
        if self.transport is not None and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and self.reading_paused:
            self.reading_paused = False
            self.transport.resume_reading()


def _address(info: Any) -> str:
    if isinstance(info, tuple) and len(info) >= 2:
        return f"{info[0]}:{info[1]}"
    return str(info or "")

"""The Redis side's admin routes (docs/admin.md, the console's Redis page):

- ``GET /_dynastore/redis``: databases, per-command counters, the hottest keys
  (operations per second, with a hint to shard them) and the biggest values;
- ``GET /_dynastore/redis/metrics``: the same counters in Prometheus' text format;
- ``POST /_dynastore/redis/keys`` ``{"Db": 0, "Match": "user:*", "Type": "hash",
  "Cursor": 0, "Count": 100}``: a page of keys with type, TTL, length, encoding;
- ``POST /_dynastore/redis/command`` ``{"Db": 0, "Command": ["HSET", "k", "f", "v"]}``:
  runs one command as a client would (the console's value viewer and editor),
  through the same dispatcher and write path; the reply as JSON.
"""

from __future__ import annotations

import base64
import weakref
from typing import TYPE_CHECKING, Any

import orjson

from dynastore import limits
from dynastore.redis import resp
from dynastore.redis.glob import matcher
from dynastore.redis.keyspace import HASH, LIST, SET, STREAM, STRING, ZSET, Entry

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.redis.server import RedisServer

ADMIN_REDIS_PATH = "/_dynastore/redis"
SERVERS: weakref.WeakKeyDictionary[Any, RedisServer] = weakref.WeakKeyDictionary()
"""The Redis server of each store (by its storage object)."""
HOT_KEY_SHARD_OPERATIONS_PER_SECOND = limits.REDIS_HOT_KEY_OPERATIONS_PER_SECOND
BIG_VALUE_BYTES = limits.REDIS_BIG_VALUE_BYTES
BIG_VALUE_ELEMENTS = limits.REDIS_BIG_VALUE_ELEMENTS

Answer = tuple[int, Any]


def register(server: RedisServer) -> None:
    SERVERS[server.database.storage] = server


def handle_admin_redis(database: Database, method: str, path: str, body: bytes | None) -> Answer:
    server = SERVERS.get(database.storage)
    if server is None:
        return 404, {"message": "The Redis protocol is off (dynastore serve --redis-port PORT)"}
    route = path.split("?", 1)[0].rstrip("/")
    if route == ADMIN_REDIS_PATH and method == "GET":
        return 200, overview(server)
    if route == ADMIN_REDIS_PATH + "/metrics" and method == "GET":
        return 200, prometheus(server)
    if method != "POST":
        return 405, {"message": "Method not allowed"}
    try:
        spec = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return 400, {"message": "The body is not JSON"}
    if not isinstance(spec, dict):
        return 400, {"message": "The body must be a JSON object"}
    db = spec.get("Db", 0)
    if not isinstance(db, int) or not 0 <= db < limits.REDIS_DATABASES:
        return 400, {"message": f"Db must be 0 to {limits.REDIS_DATABASES - 1}"}
    if route == ADMIN_REDIS_PATH + "/keys":
        return keys_page(server, db, spec)
    if route == ADMIN_REDIS_PATH + "/command":
        command = spec.get("Command")
        if not isinstance(command, list) or not command or not all(isinstance(part, str) for part in command):
            return 400, {"message": "Command must be a non-empty list of strings"}
        return 200, run_command(server, db, [part.encode() for part in command])
    return 404, {"message": "Not found"}


def run_command(server: RedisServer, db: int, argv: list[bytes]) -> dict[str, Any]:
    client = server.new_client(None)
    client.db = db
    client.protocol = 3
    client.name = b"dynastore-console"
    from dynastore.redis.server import BLOCKED

    try:
        reply = server.execute(client, argv)
    finally:
        server.forget_client(client)
    if reply is BLOCKED:
        return {"Error": "ERR blocking commands do not run from the admin route"}
    if reply is not None and type(reply) is resp.Error:
        return {"Error": reply.message}
    return {"Reply": to_json(reply)}


def to_json(value: Any) -> Any:
    """A reply as JSON: bulk strings as text (base64 under ``{"base64": ...}``
    when they are not UTF-8), maps as lists of pairs, doubles as numbers."""
    kind = type(value)
    if kind is bytes:
        try:
            return value.decode()
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(value).decode()}
    if value is None or kind in (int, bool, str, resp.Status):
        return value if kind is not resp.Status else str(value)
    if kind in (list, tuple):
        return [to_json(item) for item in value]
    if kind is resp.Map:
        return [[to_json(key), to_json(item)] for key, item in value.pairs]
    if kind is resp.SetReply or kind is resp.Push:
        return [to_json(item) for item in value.items]
    if kind is resp.Double:
        return value.value if value.value == value.value and abs(value.value) != float("inf") else str(value.value)
    if kind is resp.Verbatim:
        return value.text.decode(errors="replace")
    if kind is resp.Many:
        return [to_json(item) for item in value.replies]
    if kind is resp.NullArray:
        return None
    return str(value)


def length_of(entry: Entry) -> int:
    return len(entry.value)


def size_of(entry: Entry) -> int:
    """About how many bytes the value holds (keys' and members' bytes)."""
    value = entry.value
    if entry.kind == STRING:
        return len(value)
    if entry.kind == HASH:
        return sum(len(name) + len(item) for name, item in value.items())
    if entry.kind in (LIST, SET):
        return sum(len(item) for item in value)
    if entry.kind == ZSET:
        return sum(len(member) + 8 for member in value.scores)
    if entry.kind == STREAM:
        return sum(16 + sum(len(part) for part in fields) for fields in value.entries.values())
    return 0


def describe(server: RedisServer, key: bytes, entry: Entry, now_ms: int) -> dict[str, Any]:
    from dynastore.redis.commands.server import encoding_of

    size = size_of(entry)
    length = length_of(entry)
    described = {
        "Key": to_json(key), "Type": entry.kind, "Encoding": encoding_of(server, entry),
        "TtlMs": None if entry.expire_ms is None else max(0, entry.expire_ms - now_ms),
        "Length": length, "Bytes": size,
    }
    if size >= BIG_VALUE_BYTES or (entry.kind != STRING and length >= BIG_VALUE_ELEMENTS):
        described["Warning"] = (
            "a big value: every read of it moves all of it; split it (a hash per entity, a list "
            "per day) or read it in pages (SCAN family, ranges)")
    return described


def keys_page(server: RedisServer, db: int, spec: dict[str, Any]) -> Answer:
    pattern = spec.get("Match", "*")
    kind = spec.get("Type")
    count = spec.get("Count", 100)
    cursor = spec.get("Cursor", 0)
    if not isinstance(pattern, str) or not isinstance(count, int) or not isinstance(cursor, int):
        return 400, {"message": "Match is a string, Count and Cursor integers"}
    count = max(1, min(count, limits.REDIS_ADMIN_KEYS_PAGE_MAX))
    entries = server.keyspace.dbs[db]
    now = server.now_ms()
    match = matcher(pattern.encode())
    names = sorted(key for key, entry in entries.items()
                   if (entry.expire_ms is None or entry.expire_ms > now) and match(key)
                   and (kind in (None, "") or entry.kind == kind))
    page = names[cursor:cursor + count]
    following = cursor + count if cursor + count < len(names) else 0
    return 200, {"Keys": [describe(server, key, entries[key], now) for key in page],
                 "Cursor": following, "Total": len(names)}


def overview(server: RedisServer) -> dict[str, Any]:
    stats = server.stats
    now = server.now_ms()
    hot_keys = []
    for key, operations, rate in stats.key_rates()[:limits.REDIS_ADMIN_HOT_KEYS]:
        item: dict[str, Any] = {"Key": to_json(key), "Operations": operations,
                                "OperationsPerSecond": round(rate, 2)}
        if rate >= HOT_KEY_SHARD_OPERATIONS_PER_SECOND:
            item["Hint"] = (f"a hot key ({rate:.0f} operations/s): shard it, e.g. {key.decode(errors='replace')}:"
                            "{0..N} with the client picking one at random and reads summing them")
        hot_keys.append(item)
    big: list[dict[str, Any]] = []
    for db, entries in enumerate(server.keyspace.dbs):
        for key, entry in entries.items():
            if size_of(entry) >= BIG_VALUE_BYTES or (entry.kind != STRING and length_of(entry) >= BIG_VALUE_ELEMENTS):
                big.append({"Db": db, **describe(server, key, entry, now)})
                if len(big) >= limits.REDIS_ADMIN_HOT_KEYS:
                    break
    return {
        "Port": server.port,
        "Role": "owner" if server.serving else "standby",
        "ConnectedClients": len(server.clients),
        "Databases": {str(db): {"Keys": len(entries), "Expires": len(server.keyspace.expiring[db])}
                      for db, entries in enumerate(server.keyspace.dbs) if entries},
        "Commands": {name: {"Calls": int(calls), "Microseconds": int(usec), "Failed": int(failed)}
                     for name, (calls, usec, failed) in sorted(stats.commands.items())},
        "ExpiredKeys": stats.expired_keys,
        "KeyspaceHits": stats.keyspace_hits,
        "KeyspaceMisses": stats.keyspace_misses,
        "HotKeys": hot_keys,
        "BigKeys": big,
    }


def prometheus(server: RedisServer) -> bytes:
    """Per-command calls, time and failures, and the keyspace, in Prometheus' text format."""
    stats = server.stats
    lines = [
        "# HELP dynastore_redis_commands_total Redis commands run, by command.",
        "# TYPE dynastore_redis_commands_total counter",
    ]
    for name, (calls, _, _) in sorted(stats.commands.items()):
        lines.append(f'dynastore_redis_commands_total{{command="{name}"}} {int(calls)}')
    lines += ["# HELP dynastore_redis_command_seconds_total Time spent running Redis commands, by command.",
              "# TYPE dynastore_redis_command_seconds_total counter"]
    for name, (_, usec, _) in sorted(stats.commands.items()):
        lines.append(f'dynastore_redis_command_seconds_total{{command="{name}"}} {usec / 1e6:.6f}')
    lines += ["# HELP dynastore_redis_command_errors_total Redis commands answered with an error, by command.",
              "# TYPE dynastore_redis_command_errors_total counter"]
    for name, (_, _, failed) in sorted(stats.commands.items()):
        lines.append(f'dynastore_redis_command_errors_total{{command="{name}"}} {int(failed)}')
    lines += ["# HELP dynastore_redis_keys Keys per database.", "# TYPE dynastore_redis_keys gauge"]
    for db, entries in enumerate(server.keyspace.dbs):
        lines.append(f'dynastore_redis_keys{{db="{db}"}} {len(entries)}')
    lines += [
        "# HELP dynastore_redis_expired_keys_total Keys removed by expiry.",
        "# TYPE dynastore_redis_expired_keys_total counter",
        f"dynastore_redis_expired_keys_total {stats.expired_keys}",
        "# HELP dynastore_redis_connected_clients Connected Redis clients.",
        "# TYPE dynastore_redis_connected_clients gauge",
        f"dynastore_redis_connected_clients {len(server.clients)}",
    ]
    return ("\n".join(lines) + "\n").encode()

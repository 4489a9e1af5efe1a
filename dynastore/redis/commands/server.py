"""Server introspection: INFO, CONFIG, COMMAND, OBJECT, TIME, LASTSAVE,
SAVE/BGSAVE (no-ops: the store is always durable), FUNCTION FLUSH."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from dynastore.redis import resp
from dynastore.redis.commands.common import COMMANDS, SYNTAX, Command, command, container, lookup
from dynastore.redis.commands.connection import REDIS_VERSION
from dynastore.redis.glob import matcher
from dynastore.redis.keyspace import HASH, LIST, SET, STRING, ZSET, Entry
from dynastore.redis.resp import Error, Map, Verbatim

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer


def default_config() -> dict[str, str]:
    """Redis 7.0's parameters and defaults (redis/config_defaults.py); CONFIG
    SET remembers each, the encoding thresholds decide OBJECT ENCODING."""
    from dynastore.redis.config_defaults import DEFAULTS

    config = dict(DEFAULTS)
    config["dir"] = os.getcwd()
    return config


ALIASES = {
    "hash-max-ziplist-entries": "hash-max-listpack-entries",
    "hash-max-ziplist-value": "hash-max-listpack-value",
    "list-max-ziplist-size": "list-max-listpack-size",
    "zset-max-ziplist-entries": "zset-max-listpack-entries",
    "zset-max-ziplist-value": "zset-max-listpack-value",
}


container("config", -2)


@command("config|get", -3, "")
def config_get(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    pairs: dict[str, str] = {}
    for pattern in argv[2:]:
        match = matcher(pattern.lower())
        for name, value in server.config.items():
            if match(name.encode()):
                pairs[name] = value
    return Map([(name.encode(), value.encode()) for name, value in pairs.items()])


@command("config|set", -4, "")
def config_set(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 != 0:
        raise Error("ERR wrong number of arguments for 'config|set' command")
    changes: dict[str, str] = {}
    for index in range(2, len(argv), 2):
        name = argv[index].decode(errors="replace").lower()
        if name not in server.config:
            raise Error(f"ERR Unknown option or number of arguments for CONFIG SET - '{name}'")
        if name in changes:
            raise Error(f"ERR Duplicate parameter - '{name}'")
        changes[name] = argv[index + 1].decode(errors="replace")
    for name, value in changes.items():
        if name in _NUMERIC and not _is_number(value):
            raise Error(f"ERR CONFIG SET failed (possibly related to argument '{name}') - "
                        "argument couldn't be parsed into an integer")
    for name, value in changes.items():
        server.config[name] = value
        for alias, canonical in ALIASES.items():
            if name == alias:
                server.config[canonical] = value
            elif name == canonical:
                server.config[alias] = value
    return resp.OK


_NUMERIC = {
    "hash-max-listpack-entries", "hash-max-listpack-value", "list-max-listpack-size",
    "set-max-intset-entries",
    "zset-max-listpack-entries", "zset-max-listpack-value", "maxclients", "timeout", "hz",
    "maxmemory-samples", "databases", "slowlog-max-len", "hash-max-ziplist-entries",
    "hash-max-ziplist-value", "list-max-ziplist-size", "zset-max-ziplist-entries",
    "zset-max-ziplist-value",
}


def _is_number(value: str) -> bool:
    try:
        int(value)
    except ValueError:
        return False
    return True


@command("config|resetstat", 2, "")
def config_resetstat(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    server.stats.reset()
    return resp.OK


@command("config|rewrite", 2, "")
def config_rewrite(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    raise Error("ERR The server is running without a config file")


# --- OBJECT ---------------------------------------------------------------------------------
def encoding_of(server: RedisServer, entry: Entry) -> str:
    """What Redis 7.0 would report for this value under the current thresholds."""
    config = server.config
    value = entry.value
    if entry.kind == STRING:
        if len(value) <= 20:
            try:
                if str(int(value)).encode() == value and -(1 << 63) <= int(value) < (1 << 63):
                    return "int"
            except ValueError:
                pass
        return "embstr" if len(value) <= 44 else "raw"
    if entry.kind == HASH:
        small = len(value) <= int(config["hash-max-listpack-entries"]) and all(
            len(name) <= int(config["hash-max-listpack-value"])
            and len(item) <= int(config["hash-max-listpack-value"]) for name, item in value.items())
        return "listpack" if small else "hashtable"
    if entry.kind == LIST:  # Redis 7.0: always a quicklist (listpack lists came in 7.2)
        return "quicklist"
    if entry.kind == SET:  # Redis 7.0: intset or hashtable (listpack sets came in 7.2)
        return "intset" if is_intset(server, value) else "hashtable"
    if entry.kind == ZSET:
        small = len(value) <= int(config["zset-max-listpack-entries"]) and all(
            len(member) <= int(config["zset-max-listpack-value"]) for member in value.scores)
        return "listpack" if small else "skiplist"
    return "stream"


def is_intset(server: RedisServer, members: set[bytes]) -> bool:
    return len(members) <= int(server.config["set-max-intset-entries"]) and all(
        _is_int(member) for member in members)


def _is_int(value: bytes) -> bool:
    try:
        return str(int(value)).encode() == value and -(1 << 63) <= int(value) < (1 << 63)
    except ValueError:
        return False


container("object", -2)


@command("object|encoding", 3, "readonly", 2, 2, 1)
def object_encoding(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[2])
    return None if entry is None else encoding_of(server, entry).encode()


@command("object|refcount", 3, "readonly", 2, 2, 1)
def object_refcount(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[2])
    return None if entry is None else 1


@command("object|idletime", 3, "readonly", 2, 2, 1)
def object_idletime(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[2])
    return None if entry is None else 0


@command("object|freq", 3, "readonly", 2, 2, 1)
def object_freq(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = lookup(server, client, argv[2])
    if entry is None:
        return None
    raise Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                "Please note that when switching between policies at runtime LRU and LFU data "
                "will take some time to adjust.")


# --- no-ops and clocks ----------------------------------------------------------------------
@command("time", 1, "fast")
def time_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    now = server.database.now()
    seconds = int(now)
    return [str(seconds).encode(), str(int((now - seconds) * 1_000_000)).encode()]


@command("lastsave", 1, "fast")
def lastsave(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return server.last_save


@command("save", 1, "")
def save(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    server.last_save = int(time.time())
    return resp.OK


@command("bgsave", -1, "")
def bgsave(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    server.last_save = int(time.time())
    return resp.Status("Background saving started")


@command("bgrewriteaof", 1, "")
def bgrewriteaof(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return resp.Status("Background append only file rewriting started")


container("function", -2)


@command("function|flush", -2, "write")
def function_flush(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3 or (len(argv) == 3 and argv[2].upper() not in (b"ASYNC", b"SYNC")):
        raise Error(SYNTAX)
    return resp.OK


@command("function|list", -2, "")
def function_list(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return []


# --- COMMAND ------------------------------------------------------------------------------------
def command_info(entry: Command) -> list[Any]:
    flags = [resp.Status(flag) for flag in entry.flags]
    return [
        entry.name.encode(), entry.arity, resp.SetReply(flags), entry.first_key, entry.last_key,
        entry.step, resp.SetReply([]), resp.SetReply([]), resp.SetReply([]),
        [command_info(sub) for sub in entry.subcommands.values()],
    ]


@command("command", -1, "")
def command_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 1:
        return [command_info(entry) for entry in COMMANDS.values()]
    raise Error(f"ERR unknown subcommand '{argv[1].decode(errors='replace')}'. Try COMMAND HELP.")


def _with_subcommands() -> None:
    COMMANDS["command"].subcommands.update({
        name: Command(f"command|{name}", handler, arity, ("",))
        for name, handler, arity in (
            ("count", lambda s, c, a: len(COMMANDS), 2),
            ("info", _command_info, -2),
            ("docs", _command_docs, -2),
            ("list", lambda s, c, a: [name.encode() for name in COMMANDS], -2),
            ("getkeys", _command_getkeys, -3),
        )
    })


def _command_info(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2:
        return [command_info(entry) for entry in COMMANDS.values()]
    replies: list[Any] = []
    for name in argv[2:]:
        entry = COMMANDS.get(name.lower().decode(errors="replace"))
        replies.append(None if entry is None else command_info(entry))
    return replies


def _command_docs(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    names = [name.lower().decode(errors="replace") for name in argv[2:]] or list(COMMANDS)
    pairs = []
    for name in names:
        entry = COMMANDS.get(name)
        if entry is None:
            continue
        pairs.append((name.encode(), Map([
            (b"summary", f"The {name.upper()} command".encode()),
            (b"since", b"1.0.0"), (b"group", b"generic"),
        ])))
    return Map(pairs)


def _command_getkeys(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = COMMANDS.get(argv[2].lower().decode(errors="replace"))
    if entry is None:
        raise Error("ERR Invalid command specified")
    keys = entry.keys(argv[2:])
    if not keys:
        raise Error("ERR The command has no key arguments")
    return keys


_with_subcommands()


# --- INFO -----------------------------------------------------------------------------------------
SECTIONS = ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
            "modules", "errorstats", "cluster", "keyspace")


def info_text(server: RedisServer, wanted: set[str]) -> bytes:
    everything = not wanted or "all" in wanted or "everything" in wanted or "default" in wanted
    lines: list[str] = []
    for section in (*SECTIONS, "commandstats"):
        if not everything and section not in wanted:
            continue
        if section == "commandstats" and not (wanted & {"all", "everything", "commandstats"}):
            continue
        fields = _section(server, section)
        if lines:
            lines.append("")
        lines.append(f"# {section.capitalize() if section != 'cpu' else 'CPU'}")
        lines.extend(f"{name}:{value}" for name, value in fields)
    return ("\r\n".join(lines) + "\r\n").encode()


def _section(server: RedisServer, section: str) -> list[tuple[str, Any]]:
    stats = server.stats
    now = time.time()
    if section == "server":
        return [
            ("redis_version", REDIS_VERSION), ("redis_git_sha1", "00000000"),
            ("redis_git_dirty", 0), ("redis_build_id", "dynastore"), ("redis_mode", "standalone"),
            ("os", f"{os.uname().sysname} {os.uname().release} {os.uname().machine}"),
            ("arch_bits", 64), ("multiplexing_api", "epoll"),
            ("gcc_version", "0.0.0"), ("process_id", os.getpid()),
            ("process_supervised", "no"), ("run_id", "0" * 40), ("tcp_port", server.port),
            ("server_time_usec", int(now * 1_000_000)),
            ("uptime_in_seconds", int(now - server.started)),
            ("uptime_in_days", int((now - server.started) // 86400)), ("hz", server.config["hz"]),
            ("configured_hz", server.config["hz"]), ("lru_clock", int(now) & 0xFFFFFF),
            ("executable", sys.executable), ("config_file", ""), ("io_threads_active", 0),
            ("dynastore", "1"),
        ]
    if section == "clients":
        blocked = sum(1 for client in server.clients.values() if client.blocked is not None)
        return [
            ("connected_clients", len(server.clients)), ("cluster_connections", 0),
            ("maxclients", server.config["maxclients"]),
            ("client_recent_max_input_buffer", 0), ("client_recent_max_output_buffer", 0),
            ("blocked_clients", blocked), ("tracking_clients", 0),
            ("clients_in_timeout_table", blocked),
        ]
    if section == "memory":
        used = _resident_bytes()
        return [
            ("used_memory", used), ("used_memory_human", _human(used)), ("used_memory_rss", used),
            ("used_memory_rss_human", _human(used)), ("used_memory_peak", used),
            ("used_memory_peak_human", _human(used)), ("maxmemory", server.config["maxmemory"]),
            ("maxmemory_human", _human(int(server.config["maxmemory"]))),
            ("maxmemory_policy", server.config["maxmemory-policy"]),
            ("mem_fragmentation_ratio", "1.00"), ("mem_allocator", "libc"),
            ("lazyfree_pending_objects", 0),
        ]
    if section == "persistence":
        return [
            ("loading", 0 if server.serving else 1), ("async_loading", 0), ("rdb_changes_since_last_save", server.keyspace.writes),
            ("rdb_bgsave_in_progress", 0), ("rdb_last_save_time", server.last_save),
            ("rdb_last_bgsave_status", "ok"), ("aof_enabled", 0), ("aof_rewrite_in_progress", 0),
            ("aof_last_write_status", "ok"),
        ]
    if section == "stats":
        return [
            ("total_connections_received", stats.total_connections_received),
            ("total_commands_processed", stats.total_commands_processed),
            ("instantaneous_ops_per_sec", 0), ("total_net_input_bytes", 0),
            ("total_net_output_bytes", 0), ("rejected_connections", stats.rejected_connections),
            ("expired_keys", stats.expired_keys), ("expired_stale_perc", "0.00"),
            ("evicted_keys", 0), ("keyspace_hits", stats.keyspace_hits),
            ("keyspace_misses", stats.keyspace_misses),
            ("pubsub_channels", len(server.channels)), ("pubsub_patterns", len(server.patterns)),
            ("total_error_replies", sum(int(counts[2]) for counts in stats.commands.values())),
        ]
    if section == "replication":
        return [("role", "master"), ("connected_slaves", 0), ("master_repl_offset", 0)]
    if section == "cpu":
        times = os.times()
        return [("used_cpu_sys", f"{times.system:.6f}"), ("used_cpu_user", f"{times.user:.6f}")]
    if section == "cluster":
        return [("cluster_enabled", 0)]
    if section == "commandstats":
        return [
            (f"cmdstat_{name.replace('|', '|')}",
             f"calls={int(calls)},usec={int(usec)},usec_per_call={usec / calls if calls else 0:.2f},"
             f"rejected_calls=0,failed_calls={int(failed)}")
            for name, (calls, usec, failed) in sorted(stats.commands.items())
        ]
    if section == "keyspace":
        fields: list[tuple[str, Any]] = []
        for index, entries in enumerate(server.keyspace.dbs):
            if entries:
                fields.append((f"db{index}", f"keys={len(entries)},"
                               f"expires={len(server.keyspace.expiring[index])},avg_ttl=0"))
        return fields
    return []


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _human(size: int) -> str:
    for unit in ("B", "K", "M", "G"):
        if size < 1024 or unit == "G":
            return f"{size:.2f}{unit}" if unit != "B" else f"{size}B"
        size //= 1024
    return f"{size}B"


@command("info", -1, "")
def info(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    wanted = {section.lower().decode(errors="replace") for section in argv[1:]}
    return Verbatim(info_text(server, wanted))

"""What every command module shares: the registry decorator, Redis's error
texts, argument parsing with Redis's rules, and key lookup with passive
expiry and the WRONGTYPE check."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynastore.redis.keyspace import Entry
from dynastore.redis.resp import Error

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

Handler = Callable[["RedisServer", "Client", list[bytes]], Any]

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
NO_SUCH_KEY = "ERR no such key"
INDEX_OUT_OF_RANGE = "ERR index out of range"
MIN_MAX_NOT_FLOAT = "ERR min or max is not a float"
STRING_TOO_LONG = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
TIMEOUT_NOT_FLOAT = "ERR timeout is not a float or out of range"
TIMEOUT_NEGATIVE = "ERR timeout is negative"
NOT_POSITIVE = "ERR value is out of range, must be positive"

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


@dataclass(slots=True)
class Command:
    """One entry of the dispatch table (what COMMAND INFO reports too)."""

    name: str
    handler: Handler
    arity: int
    """Redis's arity: the argument count with the name; negative: at least that many."""
    flags: tuple[str, ...]
    first_key: int = 0
    last_key: int = 0
    step: int = 0
    subcommands: dict[str, Command] = field(default_factory=dict)

    @property
    def writes(self) -> bool:
        return "write" in self.flags

    def keys(self, argv: list[bytes]) -> list[bytes]:
        """The key arguments (WATCH, cluster slots, COMMAND GETKEYS)."""
        if self.first_key <= 0:
            return []
        last = self.last_key if self.last_key >= 0 else len(argv) + self.last_key
        return argv[self.first_key:last + 1:self.step or 1]


COMMANDS: dict[str, Command] = {}


def command(
    name: str, arity: int, flags: str = "", first_key: int = 0, last_key: int = 0, step: int = 0
) -> Callable[[Handler], Handler]:
    """Register a command (``name`` lowercase; ``parent|sub`` for a subcommand)."""

    def register(handler: Handler) -> Handler:
        entry = Command(name, handler, arity, tuple(flags.split()), first_key, last_key, step)
        if "|" in name:
            parent, sub = name.split("|")
            COMMANDS[parent].subcommands[sub] = entry
        else:
            COMMANDS[name] = entry
        return handler

    return register


def container(name: str, arity: int, flags: str = "") -> None:
    """A command that only has subcommands (CONFIG, CLIENT, OBJECT...)."""

    def no_subcommand(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
        raise Error(f"ERR unknown subcommand '{argv[1].decode(errors='replace')}'. "
                    f"Try {name.upper()} HELP.")

    COMMANDS[name] = Command(name, no_subcommand, arity, tuple(flags.split()))


# --- arguments ------------------------------------------------------------------------
_INTEGER = re.compile(rb"(0|-?[1-9][0-9]*)\Z")


def to_int(value: bytes, message: str = NOT_INTEGER) -> int:
    """A 64-bit signed integer as Redis's string2ll reads it (no '+', no spaces, no leading zeros)."""
    if value.isdigit() and len(value) < 19 and (value[0] != 48 or len(value) == 1):  # the usual case
        return int(value)
    if len(value) > 20 or _INTEGER.match(value) is None:
        raise Error(message)
    number = int(value)
    if number < INT64_MIN or number > INT64_MAX:
        raise Error(message)
    return number


_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INFINITY = re.compile(rb"[+-]?inf(?:inity)?\Z", re.IGNORECASE)


def to_float(value: bytes, message: str = NOT_FLOAT, allow_infinity: bool = True) -> float:
    """A double as strtod reads it, without spaces and never NaN (Redis's getDoubleFromObject)."""
    if value.isdigit() and len(value) < 20:  # the usual case (an integer score)
        return float(value)
    if _FLOAT.match(value):
        number = float(value)
        if math.isinf(number) and not allow_infinity:
            raise Error(message)
        return number
    if allow_infinity and _INFINITY.match(value):
        return float(value.replace(b"inity", b"").replace(b"INITY", b""))
    raise Error(message)


def name_of(argv: list[bytes]) -> str:
    return argv[0].decode(errors="replace").lower()


def upper(value: bytes) -> bytes:
    return value.upper()


# --- keys -----------------------------------------------------------------------------
def lookup(server: RedisServer, client: Client, key: bytes, kind: str | None = None) -> Entry | None:
    """The key's live entry (an expired one is deleted now: passive expiry),
    None if there is none; a key of another type than ``kind`` is WRONGTYPE."""
    db = client.db
    entry = server.keyspace.dbs[db].get(key)
    if entry is None:
        return None
    if entry.expire_ms is not None and entry.expire_ms <= server.now_ms():
        server.expire_now(db, key, entry)
        return None
    if kind is not None and entry.kind != kind:
        raise Error(WRONGTYPE)
    return entry


def lookup_read(server: RedisServer, client: Client, key: bytes, kind: str | None = None) -> Entry | None:
    """``lookup`` counted in INFO's keyspace_hits / keyspace_misses."""
    entry = lookup(server, client, key, kind)
    if entry is None:
        server.stats.keyspace_misses += 1
    else:
        server.stats.keyspace_hits += 1
    return entry


def delete_key(server: RedisServer, db: int, key: bytes) -> bool:
    """Remove the key (its rows too); False if it did not exist."""
    entry = server.keyspace.dbs[db].pop(key, None)
    if entry is None:
        return False
    server.keyspace.deleted_key(db, key, entry)
    return True


def slice_range(start: int, stop: int, length: int) -> tuple[int, int] | None:
    """Redis's inclusive start/stop (negative from the end) as a Python range, None if empty."""
    if start < 0:
        start += length
    if stop < 0:
        stop += length
    if start < 0:
        start = 0
    if start > stop or start >= length:
        return None
    if stop >= length:
        stop = length - 1
    return start, stop + 1

"""Sorted-set commands: O(log N) inserts, O(log N + M) ranges (keyspace.ZSet)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynastore.redis import resp
from dynastore.redis.commands.common import (
    MIN_MAX_NOT_FLOAT,
    NOT_POSITIVE,
    SYNTAX,
    command,
    delete_key,
    lookup,
    lookup_read,
    slice_range,
    to_float,
    to_int,
)
from dynastore.redis.commands.keys import scan_options, scan_page
from dynastore.redis.commands.lists import timeout_of
from dynastore.redis.glob import matcher
from dynastore.redis.keyspace import SET, ZSET, Entry, ZSet, score_bytes
from dynastore.redis.resp import Double, Error

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

LEX_INVALID = "ERR min or max not valid string range item"


def zset_of(server: RedisServer, client: Client, key: bytes, count: bool = True) -> Entry | None:
    return (lookup_read if count else lookup)(server, client, key, ZSET)


def zset_for_write(server: RedisServer, client: Client, key: bytes) -> Entry:
    entry = lookup(server, client, key, ZSET)
    if entry is None:
        entry = Entry(ZSET, ZSet())
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.changed_head(client.db, key, entry)
    return entry


def set_score(server: RedisServer, client: Client, key: bytes, entry: Entry, member: bytes, score: float) -> None:
    entry.value.add(member, score)
    server.keyspace.changed_element(client.db, key, member, score_bytes(score))


def remove(server: RedisServer, client: Client, key: bytes, entry: Entry, member: bytes) -> bool:
    if not entry.value.remove(member):
        return False
    server.keyspace.changed_element(client.db, key, member, None)
    return True


def drop_if_empty(server: RedisServer, client: Client, key: bytes, entry: Entry) -> None:
    if not len(entry.value):
        delete_key(server, client.db, key)


def with_scores(client: Client, pairs: list[tuple[float, bytes]], scores: bool) -> list[Any]:
    if not scores:
        return [member for _, member in pairs]
    if client.protocol == 3:
        return [[member, Double(score)] for score, member in pairs]
    out: list[Any] = []
    for score, member in pairs:
        out += [member, Double(score)]
    return out


# --- ZADD and friends ------------------------------------------------------------------------
_ZADD_FLAGS = frozenset((b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR"))


@command("zadd", -4, "write fast", 1, 1, 1)
def zadd(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    flags: set[bytes] = set()
    index = 2
    while index < len(argv) and (option := argv[index].upper()) in _ZADD_FLAGS:
        flags.add(option)
        index += 1
    pairs = argv[index:]
    if not pairs or len(pairs) % 2:
        raise Error(SYNTAX)
    incr = False
    if flags:
        if b"NX" in flags and b"XX" in flags:
            raise Error("ERR XX and NX options at the same time are not compatible")
        if len(flags & {b"NX", b"GT", b"LT"}) > 1:
            raise Error("ERR GT, LT, and/or NX options at the same time are not compatible")
        incr = b"INCR" in flags
        if incr and len(pairs) != 2:
            raise Error("ERR INCR option supports a single increment-element pair")
    scores = [to_float(pairs[i]) for i in range(0, len(pairs), 2)]
    entry = zset_of(server, client, argv[1], count=False)
    if entry is None and b"XX" in flags:
        return None if incr else 0
    entry = zset_for_write(server, client, argv[1])
    added = changed = 0
    result: float | None = None
    for score, member in zip(scores, pairs[1::2], strict=True):
        old = entry.value.scores.get(member)
        if old is None:
            if b"XX" in flags:
                continue
            if incr and math.isnan(score):
                raise Error("ERR resulting score is not a number (NaN)")
            set_score(server, client, argv[1], entry, member, score)
            added += 1
            result = score
            continue
        if b"NX" in flags:
            continue
        new = old + score if incr else score
        if math.isnan(new):
            raise Error("ERR resulting score is not a number (NaN)")
        if (b"GT" in flags and new <= old) or (b"LT" in flags and new >= old):
            continue
        result = new
        if new != old:
            set_score(server, client, argv[1], entry, member, new)
            changed += 1
    drop_if_empty(server, client, argv[1], entry)
    if incr:
        return None if result is None else Double(result)
    return added + changed if b"CH" in flags else added


@command("zincrby", 4, "write fast", 1, 1, 1)
def zincrby(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    by = to_float(argv[2])
    entry = zset_for_write(server, client, argv[1])
    new = entry.value.scores.get(argv[3], 0.0) + by
    if math.isnan(new):
        drop_if_empty(server, client, argv[1], entry)
        raise Error("ERR resulting score is not a number (NaN)")
    set_score(server, client, argv[1], entry, argv[3], new)
    return Double(new)


@command("zscore", 3, "readonly fast", 1, 1, 1)
def zscore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = zset_of(server, client, argv[1])
    score = None if entry is None else entry.value.scores.get(argv[2])
    return None if score is None else Double(score)


@command("zmscore", -3, "readonly fast", 1, 1, 1)
def zmscore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = zset_of(server, client, argv[1])
    scores = {} if entry is None else entry.value.scores
    return [None if (score := scores.get(member)) is None else Double(score) for member in argv[2:]]


@command("zcard", 2, "readonly fast", 1, 1, 1)
def zcard(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = zset_of(server, client, argv[1])
    return 0 if entry is None else len(entry.value)


@command("zrem", -3, "write fast", 1, 1, 1)
def zrem(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    entry = zset_of(server, client, argv[1], count=False)
    if entry is None:
        return 0
    removed = sum(remove(server, client, argv[1], entry, member) for member in argv[2:])
    drop_if_empty(server, client, argv[1], entry)
    return removed


def _rank(server: RedisServer, client: Client, argv: list[bytes], reverse: bool) -> Any:
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHSCORE"):
        raise Error(SYNTAX)
    entry = zset_of(server, client, argv[1])
    if entry is None:
        return None
    rank = entry.value.rank(argv[2])
    if rank is None:
        return None
    if reverse:
        rank = len(entry.value) - 1 - rank
    if len(argv) == 4:
        return [rank, Double(entry.value.scores[argv[2]])]
    return rank


@command("zrank", -3, "readonly fast", 1, 1, 1)
def zrank(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _rank(server, client, argv, False)


@command("zrevrank", -3, "readonly fast", 1, 1, 1)
def zrevrank(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _rank(server, client, argv, True)


# --- ranges ------------------------------------------------------------------------------------
def score_bound(value: bytes) -> tuple[float, bool]:
    """(score, exclusive) of a ZRANGEBYSCORE bound: ``1.5``, ``(1.5``, ``-inf``."""
    exclusive = value.startswith(b"(")
    number = to_float(value[1:] if exclusive else value, MIN_MAX_NOT_FLOAT)
    return number, exclusive


def lex_bound(value: bytes) -> tuple[bytes | None, bool, int]:
    """(member, exclusive, infinity) of a BYLEX bound: ``[a``, ``(a``, ``-`` (-1), ``+`` (1)."""
    if value == b"-":
        return None, False, -1
    if value == b"+":
        return None, False, 1
    if value[:1] == b"[":
        return value[1:], False, 0
    if value[:1] == b"(":
        return value[1:], True, 0
    raise Error(LEX_INVALID)


def score_span(zset: ZSet, low: tuple[float, bool], high: tuple[float, bool]) -> tuple[int, int]:
    """The index range [start, end) of members with low <= score <= high (bounds exclusive as said)."""
    order = zset.order
    low_score, low_exclusive = low
    high_score, high_exclusive = high
    start = order.bisect_left((math.nextafter(low_score, math.inf),) if low_exclusive else (low_score,))
    end = order.bisect_left((high_score,) if high_exclusive else (math.nextafter(high_score, math.inf),))
    if math.isinf(high_score) and high_score > 0 and not high_exclusive:
        end = len(order)
    return int(start), int(max(start, end))


def lex_span(zset: ZSet, low: tuple[bytes | None, bool, int], high: tuple[bytes | None, bool, int]) -> tuple[int, int]:
    order = zset.order
    if not order:
        return 0, 0
    score = order[0][0]

    def position(bound: tuple[bytes | None, bool, int], is_low: bool) -> int:
        member, exclusive, infinity = bound
        if infinity:
            return 0 if infinity < 0 else len(order)
        if is_low:
            found = order.bisect_right((score, member)) if exclusive else order.bisect_left((score, member))
        else:
            found = order.bisect_left((score, member)) if exclusive else order.bisect_right((score, member))
        return int(found)

    start, end = position(low, True), position(high, False)
    return start, max(start, end)


def _limit(argv: list[bytes], index: int) -> tuple[int, int]:
    if index + 2 >= len(argv):
        raise Error(SYNTAX)
    return to_int(argv[index + 1]), to_int(argv[index + 2])


def select_range(
    entry: Entry | None, start: bytes, stop: bytes, by: str, reverse: bool,
    offset: int = 0, count: int = -1,
) -> list[tuple[float, bytes]]:
    """The (score, member) pairs of a ZRANGE, in reply order."""
    if by == "score":
        low, high = (score_bound(stop), score_bound(start)) if reverse else (score_bound(start), score_bound(stop))
    elif by == "lex":
        lex_low, lex_high = (lex_bound(stop), lex_bound(start)) if reverse else (lex_bound(start), lex_bound(stop))
    else:
        first, last = to_int(start), to_int(stop)
    if entry is None:
        return []
    zset: ZSet = entry.value
    order = zset.order
    length = len(order)
    if by == "rank":
        bounds = slice_range(first, last, length)
        if bounds is None:
            return []
        if reverse:
            return [order[length - 1 - index] for index in range(bounds[0], bounds[1])]
        return list(order.islice(bounds[0], bounds[1]))
    begin, end = score_span(zset, low, high) if by == "score" else lex_span(zset, lex_low, lex_high)
    if offset < 0:
        return []
    if reverse:
        stop_at = end - offset
        start_at = begin if count < 0 else max(begin, stop_at - count)
        return list(order.islice(start_at, max(start_at, stop_at), reverse=True))
    start_at = begin + offset
    stop_at = end if count < 0 else min(end, start_at + count)
    return list(order.islice(start_at, max(start_at, stop_at)))


def parse_zrange(argv: list[bytes], start_index: int) -> tuple[str, bool, int, int, bool]:
    by, reverse, scores = "rank", False, False
    offset, count = 0, -1
    limited = False
    index = start_index
    while index < len(argv):
        option = argv[index].upper()
        if option == b"BYSCORE":
            by = "score"
        elif option == b"BYLEX":
            by = "lex"
        elif option == b"REV":
            reverse = True
        elif option == b"WITHSCORES":
            scores = True
        elif option == b"LIMIT":
            offset, count = _limit(argv, index)
            limited = True
            index += 2
        else:
            raise Error(SYNTAX)
        index += 1
    if limited and by == "rank":
        raise Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    if scores and by == "lex":
        raise Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    return by, reverse, offset, count, scores


@command("zrange", -4, "readonly", 1, 1, 1)
def zrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    by, reverse, offset, count, scores = parse_zrange(argv, 4)
    pairs = select_range(zset_of(server, client, argv[1]), argv[2], argv[3], by, reverse, offset, count)
    return with_scores(client, pairs, scores)


@command("zrangestore", -5, "write", 1, 2, 1)
def zrangestore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    by, reverse, offset, count, scores = parse_zrange(argv, 5)
    if scores:
        raise Error(SYNTAX)
    pairs = select_range(zset_of(server, client, argv[2]), argv[3], argv[4], by, reverse, offset, count)
    return store_zset(server, client, argv[1], {member: score for score, member in pairs})


def _old_range(server: RedisServer, client: Client, argv: list[bytes], by: str, reverse: bool) -> Any:
    scores = False
    offset, count = 0, -1
    index = 4
    while index < len(argv):
        option = argv[index].upper()
        if option == b"WITHSCORES" and by != "lex":
            scores = True
        elif option == b"LIMIT" and by != "rank":
            offset, count = _limit(argv, index)
            index += 2
        else:
            raise Error(SYNTAX)
        index += 1
    pairs = select_range(zset_of(server, client, argv[1]), argv[2], argv[3], by, reverse, offset, count)
    return with_scores(client, pairs, scores)


@command("zrevrange", -4, "readonly", 1, 1, 1)
def zrevrange(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _old_range(server, client, argv, "rank", True)


@command("zrangebyscore", -4, "readonly", 1, 1, 1)
def zrangebyscore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _old_range(server, client, argv, "score", False)


@command("zrevrangebyscore", -4, "readonly", 1, 1, 1)
def zrevrangebyscore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _old_range(server, client, argv, "score", True)


@command("zrangebylex", -4, "readonly", 1, 1, 1)
def zrangebylex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _old_range(server, client, argv, "lex", False)


@command("zrevrangebylex", -4, "readonly", 1, 1, 1)
def zrevrangebylex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _old_range(server, client, argv, "lex", True)


@command("zcount", 4, "readonly fast", 1, 1, 1)
def zcount(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    low, high = score_bound(argv[2]), score_bound(argv[3])
    entry = zset_of(server, client, argv[1])
    if entry is None:
        return 0
    start, end = score_span(entry.value, low, high)
    return end - start


@command("zlexcount", 4, "readonly fast", 1, 1, 1)
def zlexcount(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    low, high = lex_bound(argv[2]), lex_bound(argv[3])
    entry = zset_of(server, client, argv[1])
    if entry is None:
        return 0
    start, end = lex_span(entry.value, low, high)
    return end - start


def _remove_range(server: RedisServer, client: Client, argv: list[bytes], by: str) -> Any:
    pairs_entry = zset_of(server, client, argv[1], count=False)
    if by == "rank":
        to_int(argv[2]), to_int(argv[3])
    elif by == "score":
        score_bound(argv[2]), score_bound(argv[3])
    else:
        lex_bound(argv[2]), lex_bound(argv[3])
    if pairs_entry is None:
        return 0
    pairs = select_range(pairs_entry, argv[2], argv[3], by, False)
    for _, member in pairs:
        remove(server, client, argv[1], pairs_entry, member)
    drop_if_empty(server, client, argv[1], pairs_entry)
    return len(pairs)


@command("zremrangebyrank", 4, "write", 1, 1, 1)
def zremrangebyrank(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _remove_range(server, client, argv, "rank")


@command("zremrangebyscore", 4, "write", 1, 1, 1)
def zremrangebyscore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _remove_range(server, client, argv, "score")


@command("zremrangebylex", 4, "write", 1, 1, 1)
def zremrangebylex(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _remove_range(server, client, argv, "lex")


# --- pops --------------------------------------------------------------------------------------
def pop_members(server: RedisServer, client: Client, key: bytes, entry: Entry, count: int, highest: bool) -> list[tuple[float, bytes]]:
    order = entry.value.order
    taken = [order[-1 - index] if highest else order[index] for index in range(min(count, len(order)))]
    for _, member in taken:
        remove(server, client, key, entry, member)
    drop_if_empty(server, client, key, entry)
    return taken


def _pop(server: RedisServer, client: Client, argv: list[bytes], highest: bool) -> Any:
    if len(argv) > 3:
        raise Error(SYNTAX)
    count = 1
    if len(argv) == 3:
        count = to_int(argv[2], NOT_POSITIVE)
        if count < 0:
            raise Error(NOT_POSITIVE)
    entry = zset_of(server, client, argv[1], count=False)
    if entry is None:
        return []
    taken = pop_members(server, client, argv[1], entry, count, highest)
    if client.protocol == 3 and len(argv) == 3:  # RESP3 with a count: [member, score] pairs
        return [[member, Double(score)] for score, member in taken]
    return [part for score, member in taken for part in (member, Double(score))]


@command("zpopmin", -2, "write fast", 1, 1, 1)
def zpopmin(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _pop(server, client, argv, False)


@command("zpopmax", -2, "write fast", 1, 1, 1)
def zpopmax(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _pop(server, client, argv, True)


def _blocking_pop(server: RedisServer, client: Client, argv: list[bytes], highest: bool) -> Any:
    timeout = timeout_of(argv[-1])
    for key in argv[1:-1]:
        entry = zset_of(server, client, key, count=False)
        if entry is not None:
            score, member = pop_members(server, client, key, entry, 1, highest)[0]
            return [key, member, Double(score)]
    if client.in_exec:
        return resp.NULL_ARRAY
    return server.block(client, argv[1:-1], timeout)


@command("bzpopmin", -3, "write blocking", 1, -2, 1)
def bzpopmin(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _blocking_pop(server, client, argv, False)


@command("bzpopmax", -3, "write blocking", 1, -2, 1)
def bzpopmax(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _blocking_pop(server, client, argv, True)


# --- combining ---------------------------------------------------------------------------------
def store_zset(server: RedisServer, client: Client, key: bytes, scores: dict[bytes, float]) -> int:
    delete_key(server, client.db, key)
    if scores:
        zset = ZSet()
        for member, score in scores.items():
            zset.add(member, score)
        entry = Entry(ZSET, zset)
        server.keyspace.dbs[client.db][key] = entry
        server.keyspace.wrote_key(client.db, key, entry)
    return len(scores)


def _inputs(server: RedisServer, client: Client, keys: list[bytes]) -> list[dict[bytes, float]]:
    found: list[dict[bytes, float]] = []
    for key in keys:
        entry = lookup_read(server, client, key)
        if entry is None:
            found.append({})
        elif entry.kind == ZSET:
            found.append(entry.value.scores)
        elif entry.kind == SET:
            found.append(dict.fromkeys(entry.value, 1.0))
        else:
            raise Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    return found


def _combine_arguments(argv: list[bytes], numkeys_index: int, name: str, allow_weights: bool
                       ) -> tuple[list[bytes], list[float], str, bool]:
    numkeys = to_int(argv[numkeys_index])
    if numkeys < 1:
        raise Error(f"ERR at least 1 input key is needed for '{name}' command")
    if numkeys_index + numkeys >= len(argv):
        raise Error(SYNTAX)
    keys = argv[numkeys_index + 1:numkeys_index + 1 + numkeys]
    weights = [1.0] * numkeys
    aggregate = "sum"
    scores = False
    index = numkeys_index + 1 + numkeys
    while index < len(argv):
        option = argv[index].upper()
        if option == b"WEIGHTS" and allow_weights and index + numkeys < len(argv):
            weights = [to_float(value, "ERR weight value is not a float")
                       for value in argv[index + 1:index + 1 + numkeys]]
            index += numkeys
        elif option == b"AGGREGATE" and allow_weights and index + 1 < len(argv):
            aggregate = argv[index + 1].lower().decode(errors="replace")
            if aggregate not in ("sum", "min", "max"):
                raise Error(SYNTAX)
            index += 1
        elif option == b"WITHSCORES" and not name.endswith("store"):
            scores = True
        else:
            raise Error(SYNTAX)
        index += 1
    return keys, weights, aggregate, scores


def _add(a: float, b: float) -> float:
    total = a + b
    return 0.0 if math.isnan(total) else total


def _min(a: float, b: float) -> float:
    return a if a <= b else b


def _max(a: float, b: float) -> float:
    return a if a >= b else b


def _times(score: float, weight: float) -> float:
    product = score * weight
    return 0.0 if math.isnan(product) else product


def combine(server: RedisServer, client: Client, keys: list[bytes], weights: list[float],
            aggregate: str, operation: str) -> dict[bytes, float]:
    inputs = _inputs(server, client, keys)
    merges: dict[str, Callable[[float, float], float]] = {"sum": _add, "min": _min, "max": _max}
    merge = merges[aggregate]
    if operation == "diff":
        first = dict(inputs[0])
        for other in inputs[1:]:
            for member in other:
                first.pop(member, None)
        return first
    if operation == "inter":
        ordered = sorted(range(len(inputs)), key=lambda i: len(inputs[i]))
        smallest = ordered[0]
        result: dict[bytes, float] = {}
        for member, score in inputs[smallest].items():
            total = _times(score, weights[smallest])
            for index in range(len(inputs)):
                if index == smallest:
                    continue
                found = inputs[index].get(member)
                if found is None:
                    break
                total = merge(total, _times(found, weights[index]))
            else:
                result[member] = total
        if len(inputs) > 1:  # merge order as Redis: inputs in the order given
            for member in result:
                total = _times(inputs[0][member], weights[0])
                for index in range(1, len(inputs)):
                    total = merge(total, _times(inputs[index][member], weights[index]))
                result[member] = total
        return result
    union: dict[bytes, float] = {}
    for index, members in enumerate(inputs):
        for member, score in members.items():
            weighted = _times(score, weights[index])
            union[member] = merge(union[member], weighted) if member in union else weighted
    return union


def _combined(server: RedisServer, client: Client, argv: list[bytes], operation: str, store: bool) -> Any:
    name = argv[0].decode(errors="replace").lower()
    keys, weights, aggregate, scores = _combine_arguments(argv, 2 if store else 1, name, operation != "diff")
    result = combine(server, client, keys, weights, aggregate, operation)
    if store:
        return store_zset(server, client, argv[1], result)
    pairs = sorted((score, member) for member, score in result.items())
    return with_scores(client, pairs, scores)


@command("zunionstore", -4, "write", 1, 1, 1)
def zunionstore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _combined(server, client, argv, "union", True)


@command("zinterstore", -4, "write", 1, 1, 1)
def zinterstore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _combined(server, client, argv, "inter", True)


@command("zdiffstore", -4, "write", 1, 1, 1)
def zdiffstore(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _combined(server, client, argv, "diff", True)


@command("zunion", -3, "readonly", 0, 0, 0)
def zunion(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _combined(server, client, argv, "union", False)


@command("zinter", -3, "readonly", 0, 0, 0)
def zinter(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _combined(server, client, argv, "inter", False)


@command("zdiff", -3, "readonly", 0, 0, 0)
def zdiff(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _combined(server, client, argv, "diff", False)


@command("zrandmember", -2, "readonly", 1, 1, 1)
def zrandmember(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHSCORES"):
        raise Error(SYNTAX)
    count = to_int(argv[2]) if len(argv) >= 3 else None
    entry = zset_of(server, client, argv[1])
    if count is None:
        return None if entry is None else random.choice(list(entry.value.scores))
    if entry is None:
        return []
    pairs = [(score, member) for member, score in entry.value.scores.items()]
    chosen = random.sample(pairs, min(count, len(pairs))) if count >= 0 else [
        random.choice(pairs) for _ in range(-count)]
    return with_scores(client, chosen, len(argv) == 4)


@command("zscan", -3, "readonly", 1, 1, 1)
def zscan(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    cursor, count, pattern, _ = scan_options(argv, 3, False)
    entry = zset_of(server, client, argv[1])
    if entry is None:
        return [b"0", []]
    scores = entry.value.scores
    from dynastore.redis.commands.server import encoding_of

    if encoding_of(server, entry) == "listpack":  # Redis answers a small zset whole, by score
        following, page = 0, [member for _, member in entry.value.order]
    else:
        following, page = scan_page(scores, cursor, count)
    match = matcher(pattern) if pattern is not None else None
    out: list[Any] = []
    for member in page:
        if match is None or match(member):
            out += [member, resp.format_double(scores[member])]
    return [str(following).encode(), out]


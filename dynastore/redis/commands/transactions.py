"""MULTI, EXEC, DISCARD, WATCH, UNWATCH.

A transaction's commands run one after another inside one EXEC, which no
other client's command interleaves (commands run one at a time, ADR 0000),
and their row changes commit together with the group's. WATCH marks the
client dirty when a watched key changes (keyspace.on_change); EXEC then
answers the null array and runs nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.redis import resp
from dynastore.redis.commands.common import command
from dynastore.redis.resp import Error

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer


@command("multi", 1, "fast")
def multi(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        raise Error("ERR MULTI calls can not be nested")
    client.multi = []
    client.multi_failed = False
    return resp.OK


@command("discard", 1, "fast")
def discard(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if client.multi is None:
        raise Error("ERR DISCARD without MULTI")
    client.multi = None
    client.multi_failed = False
    server.unwatch(client)
    return resp.OK


@command("exec", 1, "")
def exec_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    queued = client.multi
    if queued is None:
        raise Error("ERR EXEC without MULTI")
    client.multi = None
    failed = client.multi_failed
    client.multi_failed = False
    dirty = client.dirty
    server.unwatch(client)
    if failed:
        raise Error("EXECABORT Transaction discarded because of previous errors.")
    if dirty:
        return resp.NULL_ARRAY
    replies = []
    client.in_exec = True
    deferring, server.deferring = server.deferring, True
    server.frozen_ms = server.now_ms()
    try:
        for command_entry, arguments in queued:
            reply = server.run(client, command_entry, arguments)
            replies.append(reply)
    finally:
        client.in_exec = False
        server.deferring = deferring
        server.frozen_ms = None
    return replies


@command("watch", -2, "fast", 1, -1, 1)
def watch(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        raise Error("ERR WATCH inside MULTI is not allowed")
    from dynastore.redis.commands.common import lookup

    for key in argv[1:]:
        lookup(server, client, key)  # an expired key is gone before it is watched
        watched = (client.db, key)
        client.watched.add(watched)
        server.watching.setdefault(watched, set()).add(client)
    return resp.OK


@command("unwatch", 1, "fast")
def unwatch(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    server.unwatch(client)
    return resp.OK

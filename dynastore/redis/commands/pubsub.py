"""Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB.

Messages are not stored (as in Redis): PUBLISH hands them to the
subscribers connected now, behind any reply the group commit still holds
for them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.redis import resp
from dynastore.redis.commands.common import command, container
from dynastore.redis.glob import matcher
from dynastore.redis.resp import Many, Push

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer


def _subscribe(server: RedisServer, client: Client, names: list[bytes], pattern: bool) -> Any:
    mine = client.patterns if pattern else client.channels
    table = server.patterns if pattern else server.channels
    kind = b"psubscribe" if pattern else b"subscribe"
    replies = []
    for name in names:
        mine.add(name)
        table.setdefault(name, set()).add(client)
        replies.append(Push([kind, name, client.subscriptions]))
    return Many(replies)


def _unsubscribe(server: RedisServer, client: Client, names: list[bytes], pattern: bool) -> Any:
    mine = client.patterns if pattern else client.channels
    table = server.patterns if pattern else server.channels
    kind = b"punsubscribe" if pattern else b"unsubscribe"
    if not names:
        names = sorted(mine)
        if not names:
            return Push([kind, None, client.subscriptions])
    replies = []
    for name in names:
        mine.discard(name)
        members = table.get(name)
        if members is not None:
            members.discard(client)
            if not members:
                del table[name]
        replies.append(Push([kind, name, client.subscriptions]))
    return Many(replies)


def unsubscribe_all(server: RedisServer, client: Client) -> None:
    if client.channels:
        _unsubscribe(server, client, list(client.channels), False)
    if client.patterns:
        _unsubscribe(server, client, list(client.patterns), True)


@command("subscribe", -2, "pubsub")
def subscribe(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _subscribe(server, client, argv[1:], False)


@command("psubscribe", -2, "pubsub")
def psubscribe(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _subscribe(server, client, argv[1:], True)


@command("unsubscribe", -1, "pubsub")
def unsubscribe(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _unsubscribe(server, client, argv[1:], False)


@command("punsubscribe", -1, "pubsub")
def punsubscribe(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return _unsubscribe(server, client, argv[1:], True)


@command("publish", 3, "pubsub fast")
def publish(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    channel, message = argv[1], argv[2]
    received = 0
    for subscriber in server.channels.get(channel, ()):
        server.send(subscriber, resp.encode_one(Push([b"message", channel, message]), subscriber.protocol))
        received += 1
    for pattern, subscribers in server.patterns.items():
        if matcher(pattern)(channel):
            for subscriber in subscribers:
                server.send(subscriber, resp.encode_one(
                    Push([b"pmessage", pattern, channel, message]), subscriber.protocol))
                received += 1
    return received


container("pubsub", -2)


@command("pubsub|channels", -2, "")
def pubsub_channels(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    match = matcher(argv[2]) if len(argv) > 2 else None
    return [name for name in server.channels if match is None or match(name)]


@command("pubsub|numsub", -2, "")
def pubsub_numsub(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    replies: list[Any] = []
    for name in argv[2:]:
        replies += [name, len(server.channels.get(name, ()))]
    return replies


@command("pubsub|numpat", 2, "")
def pubsub_numpat(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return len(server.patterns)

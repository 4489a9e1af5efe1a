"""Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET, CLIENT."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from dynastore import limits
from dynastore.redis import resp
from dynastore.redis.commands.common import command, container, to_int
from dynastore.redis.resp import Error, Map, Status

if TYPE_CHECKING:
    from dynastore.redis.server import Client, RedisServer

REDIS_VERSION = "7.0.15"
"""The Redis version whose behaviour is served (Debian's redis-server here)."""


@command("ping", -1, "fast")
def ping(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 2:
        raise Error("ERR wrong number of arguments for 'ping' command")
    if client.subscriptions and client.protocol == 2:
        return [b"pong", argv[1] if len(argv) == 2 else b""]
    return argv[1] if len(argv) == 2 else resp.PONG


@command("echo", 2, "fast")
def echo(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return argv[1]


@command("select", 2, "fast")
def select(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    index = to_int(argv[1])
    if index < 0 or index >= limits.REDIS_DATABASES:
        raise Error("ERR DB index is out of range")
    client.db = index
    return resp.OK


@command("quit", -1, "fast")
def quit_(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    client.closing = True
    return resp.OK


@command("reset", 1, "fast")
def reset(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    from dynastore.redis.commands.pubsub import unsubscribe_all

    client.multi = None
    client.multi_failed = False
    server.unwatch(client)
    unsubscribe_all(server, client)
    client.db = 0
    client.protocol = 2
    client.name = b""
    return Status("RESET")


def hello_reply(client: Client) -> Map:
    return Map([
        (b"server", b"redis"), (b"version", REDIS_VERSION.encode()), (b"proto", client.protocol),
        (b"id", client.id), (b"mode", b"standalone"), (b"role", b"master"), (b"modules", []),
    ])


@command("hello", -1, "fast")
def hello(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    protocol = client.protocol
    if len(argv) >= 2:
        try:
            protocol = to_int(argv[1])
        except Error:
            raise Error("ERR Protocol version is not an integer or out of range") from None
        if protocol < 2 or protocol > 3:
            raise Error("NOPROTO unsupported protocol version")
    index = 2
    name = None
    while index < len(argv):
        option = argv[index].upper()
        more = len(argv) - index - 1
        if option == b"AUTH" and more >= 2:
            authenticate(server, client, argv[index + 1], argv[index + 2])
            index += 3
        elif option == b"SETNAME" and more >= 1:
            name = argv[index + 1]
            check_name(name)
            index += 2
        else:
            raise Error(f"ERR Syntax error in HELLO option '{argv[index].decode(errors='replace')}'")
    if needs_auth(server, client):
        raise Error("NOAUTH HELLO must be called with the client already authenticated, otherwise "
                    "the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the "
                    "client and select the RESP protocol version at the same time")
    if name is not None:
        client.name = name
    client.protocol = protocol
    return hello_reply(client)


def needs_auth(server: RedisServer, client: Client) -> bool:
    return (bool(server.config.get("requirepass")) or server.access_keys is not None) \
        and not client.authenticated


WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."


def authenticate(server: RedisServer, client: Client, user: bytes | None, password: bytes) -> None:
    """AUTH / HELLO AUTH: with --credentials, a user is an access key id and
    its password the secret (or AUTH SECRET alone); else requirepass."""
    secret = password.decode(errors="replace")
    keys = server.access_keys
    if keys is not None:
        name = None if user is None else user.decode(errors="replace")
        for key in keys.values():
            if (name is None or name == key.access_key_id) and key.secret_access_key == secret:
                client.authenticated = True
                client.readonly = key.readonly
                client.user = key.access_key_id
                return
        raise Error(WRONGPASS)
    required = server.config.get("requirepass", "")
    if not required:
        if user is None:
            raise Error("ERR AUTH <password> called without any password configured for the "
                        "default user. Are you sure your configuration is correct?")
        if user == b"default":
            client.authenticated = True
            return
        raise Error(WRONGPASS)
    if (user is not None and user != b"default") or secret != required:
        raise Error(WRONGPASS)
    client.authenticated = True


@command("auth", -2, "fast")
def auth(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise Error("ERR syntax error")
    if len(argv) == 2:
        authenticate(server, client, None, argv[1])
    else:
        authenticate(server, client, argv[1], argv[2])
    return resp.OK


def check_name(name: bytes) -> None:
    if any(byte < 33 or byte > 126 for byte in name):
        raise Error("ERR Client names cannot contain spaces, newlines or special characters.")


container("client", -2)


@command("client|setname", 3, "fast")
def client_setname(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    check_name(argv[2])
    client.name = argv[2]
    return resp.OK


@command("client|getname", 2, "fast")
def client_getname(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return client.name or None


@command("client|id", 2, "fast")
def client_id(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return client.id


def client_line(server: RedisServer, other: Client) -> bytes:
    now = time.time()
    flags = "N"
    if other.multi is not None:
        flags = "x"
    elif other.blocked is not None:
        flags = "b"
    elif other.subscriptions:
        flags = "P"
    return (
        f"id={other.id} addr={other.address} laddr={other.local_address} fd=8 "
        f"name={other.name.decode(errors='replace')} age={int(now - other.created)} idle=0 "
        f"flags={flags} db={other.db} sub={len(other.channels)} psub={len(other.patterns)} "
        f"ssub=0 multi={-1 if other.multi is None else len(other.multi)} qbuf=0 qbuf-free=0 "
        f"argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r "
        f"cmd={other.last_command} user={other.user} redir=-1 resp={other.protocol}"
    ).encode()


@command("client|list", -2, "")
def client_list(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    ids = None
    if len(argv) > 2:
        option = argv[2].upper()
        if option == b"ID" and len(argv) > 3:
            ids = {to_int(value) for value in argv[3:]}
        elif option == b"TYPE" and len(argv) == 4:
            kind = argv[3].lower()
            if kind not in (b"normal", b"master", b"replica", b"pubsub"):
                raise Error(f"ERR Unknown client type '{argv[3].decode(errors='replace')}'")
            ids = {other.id for other in server.clients.values()
                   if (kind == b"pubsub") == bool(other.subscriptions) and kind in (b"normal", b"pubsub")}
        else:
            raise Error("ERR syntax error")
    lines = [client_line(server, other) + b"\n" for other in server.clients.values()
             if ids is None or other.id in ids]
    return resp.Verbatim(b"".join(lines))


@command("client|info", 2, "")
def client_info(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    return resp.Verbatim(client_line(server, client) + b"\n")


@command("client|kill", -3, "")
def client_kill(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 3:  # the old form: CLIENT KILL addr:port
        address = argv[2].decode(errors="replace")
        for other in list(server.clients.values()):
            if other.address == address:
                _kill(other)
                return resp.OK
        raise Error("ERR No such client")
    if len(argv) % 2 != 0:
        raise Error("ERR syntax error")
    killed = 0
    filters = [(argv[i].upper(), argv[i + 1]) for i in range(2, len(argv), 2)]
    for other in list(server.clients.values()):
        match = True
        for option, value in filters:
            if option == b"ID":
                match = match and other.id == to_int(value)
            elif option == b"ADDR":
                match = match and other.address == value.decode(errors="replace")
            elif option == b"LADDR":
                match = match and other.local_address == value.decode(errors="replace")
            elif option == b"SKIPME":
                if value.lower() == b"yes" and other is client:
                    match = False
            elif option == b"USER":
                match = match and value == b"default"
            elif option == b"TYPE":
                match = match and (value.lower() == b"pubsub") == bool(other.subscriptions)
            else:
                raise Error("ERR syntax error")
        if match and (other is not client or (b"SKIPME", b"no") in filters):
            _kill(other)
            killed += 1
    return killed


def _kill(other: Client) -> None:
    other.closing = True
    if other.connection is not None:
        other.connection.close()


@command("client|no-evict", 3, "")
def client_no_evict(server: RedisServer, client: Client, argv: list[bytes]) -> Any:
    if argv[2].lower() not in (b"on", b"off"):
        raise Error("ERR syntax error")
    return resp.OK

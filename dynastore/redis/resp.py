"""RESP, Redis's wire format: the request parser and the reply encoder.

Requests are arrays of bulk strings (``*2\\r\\n$3\\r\\nGET\\r\\n$1\\r\\nk\\r\\n``)
or inline commands (``GET k\\r\\n``, what telnet sends). The parser is
incremental: ``feed`` takes whatever bytes arrived and returns every complete
command; a malformed frame raises ``ProtocolError`` with Redis's text, after
which the connection is closed (Redis does the same).

Replies are Python values encoded for the connection's protocol version
(2, or 3 after ``HELLO 3``): bytes are bulk strings, ``Status`` simple
strings, int integers, None the null, lists arrays, and the wrappers below
the types RESP3 added (maps, sets, doubles, booleans, pushes), which RESP2
spells as arrays, bulk strings and integers as Redis does.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dynastore import limits


class ProtocolError(Exception):
    """A frame no Redis would accept: answered with ``-ERR Protocol error: ...``, then closed."""


class Status(str):
    """A simple string reply (``+OK``)."""

    __slots__ = ()


class Error(Exception):
    """An error reply: ``message`` starts with its code (``ERR``, ``WRONGTYPE``...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Map:
    """A map reply: RESP3 ``%``, RESP2 a flat array of keys and values."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[Any, Any]]) -> None:
        self.pairs = pairs


class SetReply:
    """A set reply: RESP3 ``~``, RESP2 an array."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class Double:
    """A double reply: RESP3 ``,``, RESP2 a bulk string (Redis's formatting)."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value


class Push:
    """An out-of-band message (pub/sub): RESP3 ``>``, RESP2 an array."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class NullArray:
    """RESP2's null array ``*-1`` (a timed-out BLPOP, an aborted EXEC); RESP3 ``_``."""

    __slots__ = ()


class Many:
    """Several replies to one command (SUBSCRIBE of several channels), one after another."""

    __slots__ = ("replies",)

    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies


NULL_ARRAY = NullArray()
OK = Status("OK")
QUEUED = Status("QUEUED")
PONG = Status("PONG")


class Verbatim:
    """A verbatim string (INFO, CLIENT INFO): RESP3 ``=``, RESP2 a bulk string."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text


def format_double(value: float) -> bytes:
    """A double as Redis 7.0 prints it (``d2string``): integers in the exact
    range without a fraction, ``inf``/``-inf``, else 17 significant digits."""
    if math.isinf(value):
        return b"inf" if value > 0 else b"-inf"
    if math.isnan(value):
        return b"nan"
    if value == 0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    if value.is_integer() and -(1 << 52) < value < (1 << 52):
        return str(int(value)).encode()
    return (b"%.17g" % value)


def encode(value: Any, protocol: int, out: list[bytes]) -> None:
    """Append ``value``'s encoding for RESP ``protocol`` (2 or 3) to ``out``."""
    kind = type(value)
    if kind is bytes:
        out.append(b"$%d\r\n%s\r\n" % (len(value), value))
    elif kind is int:
        out.append(b":%d\r\n" % value)
    elif kind is Status:
        out.append(b"+%s\r\n" % value.encode())
    elif value is None:
        out.append(b"_\r\n" if protocol == 3 else b"$-1\r\n")
    elif kind is list or kind is tuple:
        out.append(b"*%d\r\n" % len(value))
        for item in value:
            encode(item, protocol, out)
    elif kind is Error:
        message = value.message.replace("\r", " ").replace("\n", " ")
        out.append(b"-%s\r\n" % message.encode())
    elif kind is bool:
        if protocol == 3:
            out.append(b"#t\r\n" if value else b"#f\r\n")
        else:
            out.append(b":1\r\n" if value else b":0\r\n")
    elif kind is Double:
        text = format_double(value.value)
        if protocol == 3:
            out.append(b",%s\r\n" % text)
        else:
            out.append(b"$%d\r\n%s\r\n" % (len(text), text))
    elif kind is Map:
        out.append((b"%%%d\r\n" if protocol == 3 else b"*%d\r\n")
                   % (len(value.pairs) * (1 if protocol == 3 else 2)))
        for key, item in value.pairs:
            encode(key, protocol, out)
            encode(item, protocol, out)
    elif kind is SetReply:
        out.append((b"~%d\r\n" if protocol == 3 else b"*%d\r\n") % len(value.items))
        for item in value.items:
            encode(item, protocol, out)
    elif kind is Push:
        out.append((b">%d\r\n" if protocol == 3 else b"*%d\r\n") % len(value.items))
        for item in value.items:
            encode(item, protocol, out)
    elif kind is NullArray:
        out.append(b"_\r\n" if protocol == 3 else b"*-1\r\n")
    elif kind is Verbatim:
        if protocol == 3:
            out.append(b"=%d\r\ntxt:%s\r\n" % (len(value.text) + 4, value.text))
        else:
            out.append(b"$%d\r\n%s\r\n" % (len(value.text), value.text))
    elif kind is Many:
        for item in value.replies:
            encode(item, protocol, out)
    elif kind is str:
        encoded = value.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(encoded), encoded))
    elif kind is float:
        encode(Double(value), protocol, out)
    else:  # pragma: no cover - a command returned something unencodable: a bug
        raise TypeError(f"cannot encode {kind.__name__} as RESP")


def encode_one(value: Any, protocol: int) -> bytes:
    out: list[bytes] = []
    encode(value, protocol, out)
    return b"".join(out)


class Parser:
    """Incremental request parser with Redis's limits (``limits.REDIS_*``)."""

    __slots__ = ("buffer", "position")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.position = 0

    def feed(self, data: bytes) -> list[list[bytes]]:
        """Every command complete after ``data``; the rest waits for more bytes."""
        buffer = self.buffer
        if not buffer and data[:1] == b"*":  # the usual case: whole frames, nothing left over
            commands, used = _whole_frames(data)
            if used == len(data):
                return commands
            data = data[used:]
        else:
            commands = []
        buffer += data
        position = self.position
        size = len(buffer)
        while position < size:
            if buffer[position] == 42:  # '*'
                parsed = self._multibulk(buffer, position)
            else:
                parsed = self._inline(buffer, position)
            if parsed is None:
                break
            command, position = parsed
            if command:
                commands.append(command)
        if position >= size:
            buffer.clear()
            position = 0
        elif position > limits.REDIS_PARSER_COMPACT_BYTES:
            del buffer[:position]
            position = 0
        elif size - position > limits.REDIS_INLINE_MAX_BYTES and buffer[position] != 42:
            raise ProtocolError("Protocol error: too big inline request")
        self.position = position
        return commands

    @staticmethod
    def _inline(buffer: bytearray, position: int) -> tuple[list[bytes], int] | None:
        end = buffer.find(b"\n", position)
        if end < 0:
            return None
        line = bytes(buffer[position:end]).rstrip(b"\r")
        if b'"' in line or b"'" in line:
            words = _split_quoted(line)
        else:
            words = line.split()
        return words, end + 1

    @staticmethod
    def _multibulk(buffer: bytearray, position: int) -> tuple[list[bytes], int] | None:
        end = buffer.find(b"\r\n", position)
        if end < 0:
            if len(buffer) - position > limits.REDIS_INLINE_MAX_BYTES:
                raise ProtocolError("Protocol error: too big mbulk count string")
            return None
        count = _length(buffer, position + 1, end)
        if count is None or count > limits.REDIS_MULTIBULK_MAX_ITEMS:
            raise ProtocolError("Protocol error: invalid multibulk length")
        position = end + 2
        if count <= 0:
            return [], position
        command: list[bytes] = []
        find = buffer.find
        size = len(buffer)
        for _ in range(count):
            if position >= size:
                return None
            if buffer[position] != 36:  # '$'
                raise ProtocolError(
                    f"Protocol error: expected '$', got '{chr(buffer[position])}'"
                )
            end = find(b"\r\n", position)
            if end < 0:
                if size - position > limits.REDIS_INLINE_MAX_BYTES:
                    raise ProtocolError("Protocol error: too big bulk count string")
                return None
            length = _length(buffer, position + 1, end)
            if length is None or length < 0 or length > limits.REDIS_BULK_MAX_BYTES:
                raise ProtocolError("Protocol error: invalid bulk length")
            start = end + 2
            if start + length + 2 > size:
                return None
            command.append(bytes(buffer[start:start + length]))
            position = start + length + 2
        return command, position


_LENGTH = re.compile(rb"0|-?[1-9][0-9]{0,18}")
"""A length as Redis's string2ll reads it: no '+', no leading zero, no
space, no '_', no "-0" (Python's int() takes all of those)."""


def _length(buffer: bytearray, start: int, end: int) -> int | None:
    """The multibulk count or bulk length in ``buffer[start:end]``; None: not one."""
    if _LENGTH.fullmatch(buffer, start, end) is None:
        return None
    value = int(buffer[start:end])
    return value if -(1 << 63) <= value < 1 << 63 else None  # string2ll's range: a long long


def _whole_frames(data: bytes) -> tuple[list[list[bytes]], int]:
    """The leading well-formed multibulk frames of ``data`` and how many
    bytes they took, by one ``split`` of the whole read (requests are mostly
    small arrays of short bulks). It stops, leaving the rest to the
    incremental parser, at anything else: an incomplete frame, an inline
    command, a bulk holding CRLF, a header not written canonically, a count
    the parser must judge (zero, negative, 1,000 or more)."""
    parts = data.split(b"\r\n")
    last = len(parts) - 1  # what follows the final CRLF: never a whole part
    commands: list[list[bytes]] = []
    used = index = 0
    while index < last:
        header = parts[index]
        if header[:1] != b"*" or not 0 < len(header) - 1 < 4:
            break
        try:
            count = int(header[1:])
        except ValueError:
            break
        end = index + 1 + 2 * count
        if count <= 0 or end > last or header != b"*%d" % count:
            break
        argv = parts[index + 2:end:2]
        size = len(header) + 2
        for length, value in zip(parts[index + 1:end:2], argv):  # noqa: B905 - same length by slicing
            if length != b"$%d" % len(value):
                return commands, used
            size += len(length) + len(value) + 4
        commands.append(argv)
        used += size
        index = end
    return commands, used


def _split_quoted(line: bytes) -> list[bytes]:
    """An inline command's words with redis-cli's quoting (sdssplitargs, simplified)."""
    words: list[bytes] = []
    index, size = 0, len(line)
    while index < size:
        while index < size and line[index:index + 1].isspace():
            index += 1
        if index >= size:
            break
        quote = line[index:index + 1]
        if quote in (b'"', b"'"):
            closing = line.find(quote, index + 1)
            if closing < 0:
                raise ProtocolError("Protocol error: unbalanced quotes in request")
            word = line[index + 1:closing]
            if quote == b'"':
                word = word.decode("unicode_escape").encode("latin-1")
            words.append(word)
            index = closing + 1
        else:
            start = index
            while index < size and not line[index:index + 1].isspace():
                index += 1
            words.append(line[start:index])
    return words

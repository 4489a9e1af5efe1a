"""Bytes that are not DAX's protocol close that connection only: other
clients keep being served, and nothing of the broken request is stored."""

from __future__ import annotations

import socket
from typing import Any

from tests.dax.conftest import DaxServerProcess, unique

HELLO = b"gJ7yne5G" + bytes([0x00, 0xF6, 0xA1, 0x69]) + b"UserAgent" + bytes([0x64]) + b"test" + bytes([0x00])
"""The client's hello: magic, no layering, no session, {UserAgent: test}, no types."""


def closed_after(server: DaxServerProcess, payload: bytes) -> bool:
    """Send ``payload``; True once the server closed the connection."""
    with socket.create_connection(("127.0.0.1", server.dax_port), timeout=5) as sock:
        sock.sendall(payload)
        try:
            while sock.recv(4096):
                pass
        except TimeoutError:
            return False
    return True


def test_a_bad_hello_closes_the_connection(dax_server: DaxServerProcess, dax: Any, hash_table: str) -> None:
    assert closed_after(dax_server, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    dax.put_item(TableName=hash_table, Item={"pk": {"S": unique()}})


def test_an_unknown_method_or_broken_item_closes_only_that_connection(
    dax_server: DaxServerProcess, dax: Any, ddb: Any, hash_table: str
) -> None:
    assert closed_after(dax_server, HELLO + bytes([0x01, 0x1A, 0x12, 0x34, 0x56, 0x78]))  # method 0x12345678
    assert closed_after(dax_server, HELLO + bytes([0x05]))  # not a request's service id
    assert closed_after(dax_server, HELLO + bytes([0x01, 0x1A, 0x0F, 0xB0, 0xCC, 0x6A, 0x1C]))  # getItem, bad item
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "v": {"S": "fine"}})
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "fine"}


def test_a_put_item_cut_short_stores_nothing(dax_server: DaxServerProcess, dax: Any, ddb: Any,
                                             hash_table: str) -> None:
    pk = unique()
    table = hash_table.encode()
    request = bytearray(HELLO)
    request += bytes([0x01, 0x3A, 0x7D, 0x8E, 0x7E, 0x56])  # 1, putItem (-2106490455)
    request += bytes([0x58, len(table)]) + table
    request += bytes([0x58, len(pk)]) + pk.encode()
    request += bytes([0x5A, 0x00, 0x10, 0x00, 0x00, 0x01])  # values: a 1 MB byte string, of which 1 byte comes
    with socket.create_connection(("127.0.0.1", dax_server.dax_port), timeout=5) as sock:
        sock.sendall(bytes(request))
    assert "Item" not in ddb.get_item(TableName=hash_table, Key={"pk": {"S": pk}})
    garbage = bytes(request[:-6]) + bytes([0x41, 0xFF, 0xFF])  # values: one byte, then a stray break
    assert closed_after(dax_server, garbage)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key={"pk": {"S": pk}})
    dax.put_item(TableName=hash_table, Item={"pk": {"S": pk}})
    assert "Item" in ddb.get_item(TableName=hash_table, Key={"pk": {"S": pk}})


def test_random_bytes_never_take_the_endpoint_down(dax_server: DaxServerProcess, dax: Any, hash_table: str) -> None:
    import os
    import random

    seed = int(os.environ.get("DYNASTORE_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (DYNASTORE_TEST_SEED replays it)")
    rng = random.Random(seed)
    from dynastore.dax.methods import ARGUMENT_COUNTS
    from dynastore.dax.wire import put_bytes, put_int

    methods = sorted(ARGUMENT_COUNTS)
    for _ in range(80):
        prefix = bytearray(HELLO + bytes([0x01]) if rng.random() < 0.7 else b"")
        if prefix and rng.random() < 0.6:  # a known method, then arguments of random shape
            put_int(prefix, rng.choice(methods))
            if rng.random() < 0.5:
                put_bytes(prefix, hash_table.encode())
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        with socket.create_connection(("127.0.0.1", dax_server.dax_port), timeout=5) as sock:
            sock.sendall(bytes(prefix) + noise)
            sock.settimeout(0.2)
            try:
                sock.recv(4096)
            except (TimeoutError, ConnectionResetError):
                pass
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item=key)
    assert dax.get_item(TableName=hash_table, Key=key, ConsistentRead=True)["Item"] == key
    assert dax_server.process.poll() is None
    assert "Traceback" not in dax_server.output()


def test_known_methods_with_arguments_of_any_shape_get_answers_not_internal_errors(
    dax_server: DaxServerProcess, dax: Any, table: str
) -> None:
    """Every method, with CBOR arguments of random shapes and types: each
    connection gets a DynamoDB error or is closed; nothing is an internal
    error (no traceback in the server's log) and the server keeps serving."""
    import os
    import random

    import cbor2

    from dynastore.dax.methods import ARGUMENT_COUNTS, AUTHORIZE_CONNECTION
    from dynastore.dax.wire import put_int

    seed = int(os.environ.get("DYNASTORE_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (DYNASTORE_TEST_SEED replays it)")
    rng = random.Random(seed)
    leaves = [None, True, False, 0, -1, 7, 2**70, -(2**70), 1.5, "", "x", table, b"", b"\x01\x02",
              table.encode(), b"\xff" * 5, cbor2.CBORTag(3321, ["a"]), cbor2.CBORTag(3324, 2)]

    def shape(depth: int = 0) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.3:
            return rng.choice(leaves)
        if roll < 0.5:
            return [shape(depth + 1) for _ in range(rng.randrange(4))]
        if roll < 0.7:
            return {rng.choice([0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 13, 15, "x"]): shape(depth + 1)
                    for _ in range(rng.randrange(4))}
        if roll < 0.85:
            return cbor2.dumps([1, shape(depth + 1), [shape(depth + 1)]])  # an expression's shape
        return cbor2.dumps(shape(depth + 1))

    methods = sorted(method for method in ARGUMENT_COUNTS if method != AUTHORIZE_CONNECTION)
    for _ in range(150):
        method = rng.choice(methods)
        request = bytearray(HELLO)
        put_int(request, 1)
        put_int(request, method)
        arguments = [shape() for _ in range(ARGUMENT_COUNTS[method])]
        if arguments and rng.random() < 0.7:
            arguments[0] = table.encode()
        request += b"".join(cbor2.dumps(argument) for argument in arguments)
        with socket.create_connection(("127.0.0.1", dax_server.dax_port), timeout=5) as sock:
            sock.sendall(bytes(request))
            sock.settimeout(0.3)
            try:
                sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                pass
    assert "Traceback" not in dax_server.output()
    key = {"pk": {"S": unique()}, "sk": {"N": "1"}}
    dax.put_item(TableName=table, Item=key)
    assert dax.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"] == key


def test_pipelined_requests_are_each_answered_once_in_order(dax_server: DaxServerProcess, dax: Any,
                                                             hash_table: str) -> None:
    """Several requests in one packet, cached GetItems among them: one answer
    each, in order (the cached ones answered before any decoding)."""
    import cbor2

    from dynastore.dax.wire import ItemReader, put_bytes, put_int

    cached, missing = unique(), unique()
    dax.put_item(TableName=hash_table, Item={"pk": {"S": cached}, "v": {"S": "here"}})  # written through: cached

    def get_item(pk: str) -> bytes:
        out = bytearray()
        put_int(out, 1)
        put_int(out, 263244906)  # getItem
        put_bytes(out, hash_table.encode())
        put_bytes(out, pk.encode())
        out.append(0xF6)
        return bytes(out)

    requests = [get_item(cached), get_item(missing), get_item(cached), get_item(cached)]
    with socket.create_connection(("127.0.0.1", dax_server.dax_port), timeout=5) as sock:
        sock.sendall(HELLO)
        sock.sendall(b"".join(requests))
        received = b""
        answers: list[Any] = []
        sock.settimeout(5)
        while len(answers) < 4:
            received += sock.recv(65536)
            reader = ItemReader(received)
            answers = []
            try:
                while not reader.at_end():
                    answers.append((reader.item(), reader.item()))
            except Exception:  # noqa: BLE001 - the rest has not arrived yet
                pass
        sock.settimeout(0.5)
        try:
            received += sock.recv(65536)  # an answer too many would come now
        except TimeoutError:
            pass
    reader = ItemReader(received)
    for _ in range(8):
        reader.item()
    assert reader.at_end(), "more answers than requests"
    assert [header for header, _ in answers] == [[], [], [], []]
    bodies = [body for _, body in answers]
    assert 0 in bodies[0] and bodies[1] == {} and bodies[2] == bodies[3] == bodies[0]
    assert cbor2.loads(bodies[0][0])  # the item's attribute list id and values

"""No 5xx for bad input, ever (issue 17): a property test over the service model.

For every operation dynastore implements (``ops.IMPLEMENTED``) hypothesis
generates requests from the operation's input shape in botocore's DynamoDB
model (``dynastore/ops/service_model.json``): structures with their required
members and some of the optional ones, enum strings, bounded numbers, keys and
items of the target table, documents, expressions, names and values. Then it
mutates one to three places of each: a JSON null, a wrong type, an empty or a
huge container, a huge string, a document, a JSON array or an expression
nested hundreds of levels, a number out of any range, an odd attribute value
or number text, an extra member, a member removed; and one request in four is
broken as bytes too (cut short, an invalid UTF-8 sequence, trailing junk).
Bodies stay within the 16 MB request limit: past it the server answers 413
and closes the connection without reading on (protocol/http.py, by design).

Each request is sent as a raw HTTP POST over one persistent connection
(http.client) to the ``endpoint`` fixture's server, so the property holds on
every transport. The answer must be a 200 (the request happened to be valid)
or a 4xx with DynamoDB's error shape (a ``__type``, a message), never a 5xx;
the server must not close the connection, and the next request on it (a
GetItem of a canary item) must answer with the item unchanged. The canary
table is written before and never named by a generated request; the last test
reads all of it back.

Replay: the run is derandomised by a fixed seed, ``DYNASTORE_PROPERTY_SEED``
(default 17) picks another one and ``DYNASTORE_PROPERTY_EXAMPLES`` (default
40 per operation) the number of examples; a failure prints both, and
hypothesis prints the falsifying request. What it found is kept as plain
regression tests in tests/api/test_malformed_requests.py (a map of thousands
of bad keys, a reply echoing megabytes of a bad value).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import uuid
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, seed, settings
from hypothesis import strategies as st

from dynastore import limits
from dynastore.ops import IMPLEMENTED
from dynastore.ops.shapes import MODEL_PATH
from tests.api.helpers import SIGV4

SEED = int(os.environ.get("DYNASTORE_PROPERTY_SEED", "17"))
EXAMPLES = int(os.environ.get("DYNASTORE_PROPERTY_EXAMPLES", "40"))
REPLAY = f"replay with DYNASTORE_PROPERTY_SEED={SEED} DYNASTORE_PROPERTY_EXAMPLES={EXAMPLES}"

MODEL = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
SHAPES: dict[str, Any] = MODEL["shapes"]
OPERATIONS = sorted(IMPLEMENTED)

RUN = uuid.uuid4().hex[:8]
TARGET = f"prop-target-{RUN}"
"""The table generated requests read and write (pk S, sk N, GSI gsi on g)."""
SCRATCH = [f"prop-scratch-{RUN}-{number}" for number in range(2)]
"""What CreateTable and DeleteTable get to name (a bounded number of tables)."""
MISSING = f"prop-missing-{RUN}"
CANARY = f"prop-canary-{RUN}"
"""Written before, never named by a generated request: must stay intact."""
ARN_PREFIX = "arn:aws:dynamodb:us-east-1:000000000000:table/"
CANARY_ITEMS = [
    {"pk": {"S": "plain"}, "n": {"N": "-12500.25"}, "s": {"S": "é\U0001F600"}},
    {"pk": {"S": "document"}, "m": {"M": {"l": {"L": [{"N": "1"}, {"NULL": True}, {"BOOL": False}]}}}},
    {"pk": {"S": "sets"}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]}, "bs": {"BS": ["AAE="]}},
    {"pk": {"S": "binary"}, "b": {"B": base64.b64encode(bytes(range(256))).decode()}},
]


class Raw(str):
    """JSON text put into a body as it is: documents and arrays nested
    thousands of levels, numbers no JSON library writes."""


# --- Sending ---------------------------------------------------------------------------


def encoded(value: Any) -> str:
    """JSON text of ``value`` (Raw pieces as they are; a string with a lone
    surrogate as a \\u escape, which is how such a string reaches a server)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{encoded(str(key))}:{encoded(inner)}" for key, inner in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encoded(inner) for inner in value) + "]"
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return json.dumps(value)
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value)


class Wire:
    """One persistent HTTP connection to the server under test."""

    def __init__(self, endpoint: str) -> None:
        address = urlsplit(endpoint)
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        self.connection.connect()

    def post(self, operation: str, body: bytes) -> tuple[int, bytes]:
        try:
            self.connection.request("POST", "/", body, {
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": f"DynamoDB_20120810.{operation}",
                "X-Amz-Date": "20261129T000000Z",
                "Authorization": SIGV4,
            })
            response = self.connection.getresponse()
            answer = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()  # the next example starts on a new connection
            raise AssertionError(f"the connection failed: {error!r} ({REPLAY})") from error
        # http.client closes the socket when the server said it would close it.
        assert not response.will_close and self.connection.sock is not None, (
            f"the server closed the connection after {response.status} {answer[:300]!r} ({REPLAY})")
        return response.status, answer

    def call(self, operation: str, request: dict[str, Any]) -> dict[str, Any]:
        status, answer = self.post(operation, encoded(request).encode())
        assert status == 200, (operation, status, answer[:500])
        result: dict[str, Any] = json.loads(answer)
        return result

    def close(self) -> None:
        self.connection.close()


def assert_dynamodb_answer(status: int, answer: bytes) -> None:
    """A 200 with a JSON object, or a 4xx with DynamoDB's error shape."""
    assert status < 500, f"{status} {answer[:500]!r} ({REPLAY})"
    body = json.loads(answer)
    assert type(body) is dict, answer[:500]
    if status == 200:
        return
    assert 400 <= status < 500, (status, answer[:500])
    error_type = body.get("__type")
    assert type(error_type) is str, answer[:500]
    namespace, _, name = error_type.partition("#")
    assert namespace.startswith(("com.amazonaws.dynamodb.", "com.amazon.coral.")) and name, error_type
    message = body.get("message", body.get("Message"))
    if name != "SerializationException":  # DynamoDB sends broken JSON's without one
        assert type(message) is str and message, answer[:500]


# --- Requests from the service model ---------------------------------------------------

ATTRIBUTE_NAMES = st.sampled_from(["pk", "sk", "g", "a", "m", "ss"]) | st.text(max_size=4)
NUMBER_TEXT = st.sampled_from(["0", "1", "-1", "3.14", "1e3", "-0.5E-2"]) | st.integers(-10**6, 10**6).map(str)
EXPRESSIONS = {
    "ConditionExpression": [
        "attribute_exists(pk)", "attribute_not_exists(#p)", "a = :v", "size(ss) > :n",
        "begins_with(#a, :v) AND NOT contains(ss, :v)", "m.x[0] <> :v OR a BETWEEN :n AND :n",
        "a IN (:v, :n)", "attribute_type(a, :v)", "(a < :n)",
    ],
    "KeyExpression": ["pk = :v", "#p = :v AND sk > :n", "pk = :v AND sk BETWEEN :n AND :n",
                      "pk = :v AND begins_with(sk, :v)", "g = :v"],
    "ProjectionExpression": ["pk", "#p, sk", "m.x[1], ss", "a.b.c, #a[0]"],
    "UpdateExpression": ["SET a = :v", "SET m.x[0] = :v, n = if_not_exists(n, :n) + :n REMOVE q",
                         "ADD n :n DELETE ss :v", "SET #a = list_append(:v, :v)", "REMOVE a, m.x[0]"],
}


def attribute_values(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    scalars = st.one_of(
        st.builds(lambda text: {"S": text}, st.text(max_size=8)),
        st.builds(lambda number: {"N": number}, NUMBER_TEXT),
        st.builds(lambda raw: {"B": base64.b64encode(raw).decode()}, st.binary(max_size=6)),
        st.just({"NULL": True}),
        st.builds(lambda flag: {"BOOL": flag}, st.booleans()),
        st.builds(lambda texts: {"SS": texts}, st.lists(st.text(max_size=3), max_size=3)),
        st.builds(lambda numbers: {"NS": numbers}, st.lists(NUMBER_TEXT, max_size=3)),
    )
    if depth == 0:
        return scalars
    inner = attribute_values(depth - 1)
    return scalars | st.builds(lambda values: {"L": values}, st.lists(inner, max_size=3)) | st.builds(
        lambda values: {"M": values}, st.dictionaries(ATTRIBUTE_NAMES, inner, max_size=3))


def keys() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"pk": st.builds(lambda text: {"S": text}, st.sampled_from(["a", "b", ""])),
         "sk": st.builds(lambda number: {"N": number}, NUMBER_TEXT)},
        optional={"g": st.just({"S": "x"})})


def items() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda key, rest: {**rest, **key}, keys(),
                     st.dictionaries(ATTRIBUTE_NAMES, attribute_values(), max_size=4))


class ModelStrategies:
    """Strategies for the model's shapes, for one operation (which decides
    the table names it may use: only CreateTable and DeleteTable get the
    scratch tables, and no one the canary)."""

    def __init__(self, operation: str) -> None:
        if operation in ("CreateTable", "DeleteTable"):
            names = [*SCRATCH, MISSING]
        else:
            names = [TARGET, TARGET, MISSING, ARN_PREFIX + TARGET]
        self.table_names = st.sampled_from(names)
        self.cache: dict[tuple[str, int], st.SearchStrategy[Any]] = {}

    def of(self, name: str, depth: int = 0) -> st.SearchStrategy[Any]:
        key = (name, min(depth, 4))
        if key not in self.cache:
            self.cache[key] = st.deferred(lambda: self.build(name, depth))
        return self.cache[key]

    def build(self, name: str, depth: int) -> st.SearchStrategy[Any]:
        special = self.special(name)
        if special is not None:
            return special
        shape = SHAPES[name]
        kind = shape["type"]
        if kind == "structure":
            required = set(shape["required"])
            members = shape["members"]
            optional = {} if depth > 3 else {
                member: self.of(target, depth + 1) for member, target in members.items() if member not in required}
            return st.fixed_dictionaries(
                {member: self.of(members[member], depth + 1) for member in shape["required"]}, optional=optional)
        if kind == "list":
            low = shape.get("min", 0)
            return st.lists(self.of(shape["member"], depth + 1), min_size=min(low, 2), max_size=max(min(low, 2), 3))
        if kind == "map":
            low = shape.get("min", 0)
            return st.dictionaries(self.of(shape["key"], depth + 1), self.of(shape["value"], depth + 1),
                                   min_size=min(low, 1), max_size=3)
        if kind == "string":
            if "enum" in shape:
                return st.sampled_from(shape["enum"])
            return st.text(min_size=shape.get("min", 0), max_size=max(shape.get("min", 0), 8))
        if kind in ("integer", "long"):
            return st.integers(shape.get("min", 0), min(shape.get("max", 100), 100))
        if kind == "double":
            return st.floats(0, 100)
        if kind == "boolean":
            return st.booleans()
        if kind == "blob":
            return st.binary(max_size=6).map(lambda raw: base64.b64encode(raw).decode())
        return st.integers(0, 2_000_000_000)  # timestamp

    def special(self, name: str) -> st.SearchStrategy[Any] | None:
        if name.startswith("TableArn@") or name == "TableName":
            return self.table_names
        if name == "ResourceArnString":
            return st.sampled_from([ARN_PREFIX + TARGET, ARN_PREFIX + MISSING, "arn:nonsense"])
        if name == "IndexName":
            return st.sampled_from(["gsi", "gsi", "no-such-index"])
        if name in ("AttributeName", "KeySchemaAttributeName", "NonKeyAttributeName", "TimeToLiveAttributeName"):
            return ATTRIBUTE_NAMES
        if name == "ExpressionAttributeNameVariable":
            return st.sampled_from(["#p", "#a", "#x", "p"])
        if name == "ExpressionAttributeValueVariable":
            return st.sampled_from([":v", ":n", ":x", "v"])
        if name == "AttributeValue":
            return attribute_values()
        if name == "NumberAttributeValue":
            return NUMBER_TEXT
        if name in ("Key",):
            return keys()
        if name == "PutItemInputAttributeMap":
            return items()
        if name == "ExpressionAttributeValueMap":
            return st.dictionaries(st.sampled_from([":v", ":n"]), attribute_values(1), min_size=1, max_size=2)
        if name in EXPRESSIONS:
            return st.sampled_from(EXPRESSIONS[name]) | st.text(max_size=12)
        return None


# --- Mutations -------------------------------------------------------------------------

WRONG_TYPES: list[Any] = [0, -1, 1.5, True, False, "x", "", [], {}, [None], {"": None}, ["x"], {"S": "x"},
                          {"N": "1"}, [[]], {"Zz": {}}]
HUGE_NUMBERS: list[Any] = [10**40, -(10**40), 2**63, 2**64, -(2**63) - 1, 1e308, -1e308, 5e-324,
                           Raw("1e99999"), Raw("-1e99999"), Raw("1" * 5000), Raw("-0"), Raw("0.0e-99999"),
                           Raw("123456789012345678901234567890.123456789e-400")]
ODD_NUMBER_TEXTS = ["1e126", "1e-131", "9" * 39, "0." + "0" * 200 + "1", "NaN", "Infinity", "-", "1e", " 1",
                    "0x10", "1_000", "", "\u0663", "1" * 5000, "-1e-130", "9.9999999999999999999999999999999999999E+125"]
ODD_ATTRIBUTE_VALUES: list[Any] = [
    {"S": "a", "N": "1"}, {"SS": []}, {"SS": ["a", "a"]}, {"NS": ["x"]}, {"NS": ["1", "1.0"]}, {"B": "!!"},
    {"BS": [""]}, {"NULL": False}, {"M": None}, {"L": {}}, {"M": []}, {"S": None}, {}, {"Q": "x"},
    {"BOOL": "maybe"}, {"S": 1}, {"L": [None]}, {"M": {"": {"S": "x"}}}, {"B": ""}, {"S": ""},
]
ODD_STRINGS = ["\ud800", "\udfff\ud800", "\x00", "\uffff", "\U0010ffff", "é" * 300, "#", ":", "."]
EXTRA_MEMBERS = ["Zz", "S", "N", "M", "L", "Item", "Key", "", "__proto__", "TableName"]
DEEP_EXPRESSIONS: list[Callable[[int], str]] = [
    lambda n: "(" * n + "a = :v" + ")" * n,
    lambda n: "(" * n + "a",
    lambda n: "a" + ".b" * n,
    lambda n: "a" + "[0]" * n,
    lambda n: "NOT " * n + "a = :v",
    lambda n: "size(" * n + "a" + ")" * n,
    lambda n: "SET " + ", ".join(f"a{i} = :v" for i in range(n)),
    lambda n: "a = :v AND " * n + "b = :v",
    lambda n: "a IN (" + ",".join([":v"] * n) + ")",
    lambda n: "a[" + "9" * n + "]",
    lambda n: "SET a = " + " + ".join([":v"] * n),
    lambda n: "#" * n,
]
BYTE_BREAKS = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x00", b"\\", b'"',
               b"{", b"]", b",", b"\\u12"]


def deep_document(levels: int, kind: str) -> Raw:
    opening, closing = ('{"L":[', "]}") if kind == "L" else ('{"M":{"a":', "}}")
    return Raw(opening * levels + '{"S":"x"}' + closing * levels)


def deep_json(levels: int, kind: str) -> Raw:
    return Raw("[" * levels + "]" * levels) if kind == "[" else Raw('{"a":' * levels + "1" + "}" * levels)


ATTRIBUTE_TYPES = frozenset({"S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"})
STRUCTURAL_KINDS = ["wrong type", "null", "empty", "huge string", "huge list", "huge map", "deep document",
                    "deep json", "deep expression", "number", "number text", "attribute value", "odd string"]
SEMANTIC_STRING_KINDS = ["deep expression", "odd string", "huge string"] * 3 + STRUCTURAL_KINDS
SEMANTIC_VALUE_KINDS = ["attribute value", "number text", "deep document"] * 3 + STRUCTURAL_KINDS


def replacement(draw: Callable[..., Any], current: Any) -> Any:
    """A value to put where ``current`` was."""
    if sum(1 for _ in islice(paths_of(current), 51)) > 50 or len(encoded(current)) > 1_000:
        current = {"S": "x"}  # a huge list or map of huge values would not fit a request
    if isinstance(current, str):  # mostly what a string may hold: DynamoDB's semantic checks
        kinds = SEMANTIC_STRING_KINDS
    elif isinstance(current, dict) and current and next(iter(current)) in ATTRIBUTE_TYPES:
        kinds = SEMANTIC_VALUE_KINDS
    else:
        kinds = STRUCTURAL_KINDS
    kind = draw(st.sampled_from(kinds))
    note(f"mutation: {kind}")
    if kind == "null":
        return None
    if kind == "wrong type":
        return draw(st.sampled_from(WRONG_TYPES))
    if kind == "empty":
        return draw(st.sampled_from([[], {}, ""]))
    if kind == "huge string":
        return draw(st.sampled_from(["x", "é", "\U0001F600", "("])) * draw(
            st.sampled_from([256, 1025, 65_536, 400_001, 2_000_000]))
    if kind == "huge list":
        element = draw(st.sampled_from([current, {"S": "x"}, None, "x"]))
        return [element] * draw(st.sampled_from([26, 101, 1_000, 20_000]))
    if kind == "huge map":
        value = draw(st.sampled_from([current, {"S": "x"}, None]))
        return {f"k{index}": value for index in range(draw(st.sampled_from([26, 101, 2_000])))}
    if kind == "deep document":
        return deep_document(draw(st.sampled_from([32, 33, 100, 600, 5_000])), draw(st.sampled_from("LM")))
    if kind == "deep json":
        return deep_json(draw(st.sampled_from([100, 2_000, 100_000])), draw(st.sampled_from("[{")))
    if kind == "deep expression":
        return draw(st.sampled_from(DEEP_EXPRESSIONS))(draw(st.sampled_from([10, 300, 3_000, 40_000])))
    if kind == "number":
        return draw(st.sampled_from(HUGE_NUMBERS))
    if kind == "number text":
        return {"N": draw(st.sampled_from(ODD_NUMBER_TEXTS))}
    if kind == "attribute value":
        return draw(st.sampled_from(ODD_ATTRIBUTE_VALUES))
    return draw(st.sampled_from(ODD_STRINGS))


def paths_of(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict) and not isinstance(value, Raw):
        for key, inner in value.items():
            yield from paths_of(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from paths_of(inner, (*path, index))


def mutate(draw: Callable[..., Any], request: Any) -> Any:
    """``request`` with one place changed (a copy where it changed)."""
    paths = list(paths_of(request))
    if len(paths) > 500:  # after a huge container: only its first places
        paths = paths[:500]
    # Uniform over the places (hypothesis favours a list's first elements),
    # the whole request only now and then.
    places = draw(st.randoms(use_true_random=False))
    if len(paths) > 1 and places.random() < 0.95:
        paths = paths[1:]
    path = places.choice(paths)
    note(f"at {list(path)}")
    if not path:
        if isinstance(request, dict) and draw(st.booleans()):
            return {**request, draw(st.sampled_from(EXTRA_MEMBERS)): replacement(draw, None)}
        return replacement(draw, request)
    request = json.loads(encoded_for_copy(request))
    parent = request
    for step in path[:-1]:
        parent = parent[step]
    action = draw(st.sampled_from(["replace"] * 6 + ["extra member", "remove"]))
    if action == "extra member" and isinstance(parent, dict):
        parent[draw(st.sampled_from(EXTRA_MEMBERS))] = replacement(draw, None)
    elif action == "remove" and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement(draw, parent[path[-1]])
    return request


RAW_MARK = "\x00raw\x00"


def encoded_for_copy(value: Any) -> str:
    """JSON for a deep copy that keeps Raw pieces as strings marked RAW_MARK."""
    return json.dumps(_marked(value))


def _marked(value: Any) -> Any:
    if isinstance(value, Raw):
        return RAW_MARK + value
    if isinstance(value, dict):
        return {key: _marked(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_marked(inner) for inner in value]
    return value


def unmarked(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(RAW_MARK):
        return Raw(value[len(RAW_MARK):])
    if isinstance(value, dict):
        return {key: unmarked(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [unmarked(inner) for inner in value]
    return value


def broken(draw: Callable[..., Any], body: bytes) -> bytes:
    """``body`` broken as bytes, or as it is."""
    kind = draw(st.sampled_from(["as is"] * 9 + ["cut", "invalid utf-8", "junk"]))
    if kind == "as is":
        return body
    note(f"bytes: {kind}")
    place = draw(st.integers(0, len(body)))
    if kind == "cut":
        return body[:place]
    if kind == "invalid utf-8":
        quote = body.find(b'"', place)
        place = quote + 1 if quote >= 0 else place
        return body[:place] + draw(st.sampled_from(BYTE_BREAKS)) + body[place:]
    if kind == "junk":
        return body + draw(st.sampled_from([b"x", b"}", b" {}", b"\x00", b"\xff"]))
    return draw(st.sampled_from([b"", b"null", b"[]", b'"x"', b"1", b"\xef\xbb\xbf{}", b"{", b"{}" * 3]))


STRATEGIES = {operation: ModelStrategies(operation) for operation in OPERATIONS}


def mutated_body(draw: Callable[..., Any], operation: str) -> bytes:
    spec = MODEL["operations"][operation]
    request = draw(STRATEGIES[operation].of(spec["input"])) if spec.get("input") else {}
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        request = mutate(draw, request)
        if isinstance(request, (dict, list)):
            request = unmarked(request)
    body = encoded(request).encode()
    # Over the 16 MB limit the server answers 413 and closes the connection
    # without reading the body (protocol/http.py): not this test's subject.
    assume(len(body) <= limits.REQUEST_BODY_MAX_BYTES)
    return broken(draw, body)


# --- Tests -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wire(endpoint: str, client: Any) -> Iterator[Wire]:
    """The connection, after creating the target and the canary tables."""
    connection = Wire(endpoint)
    for name, definitions, key_schema, extra in [
        (TARGET, [("pk", "S"), ("sk", "N"), ("g", "S")], [("pk", "HASH"), ("sk", "RANGE")],
         {"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                      "Projection": {"ProjectionType": "ALL"}}]}),
        (CANARY, [("pk", "S")], [("pk", "HASH")], {}),
    ]:
        connection.call("CreateTable", {
            "TableName": name, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": a, "AttributeType": t} for a, t in definitions],
            "KeySchema": [{"AttributeName": a, "KeyType": k} for a, k in key_schema], **extra})
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    for item in CANARY_ITEMS:
        connection.call("PutItem", {"TableName": CANARY, "Item": item})
    connection.call("PutItem", {"TableName": TARGET, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "x"},
                                                              "ss": {"SS": ["x"]}, "m": {"M": {"x": {"L": []}}}}})
    try:
        yield connection
    finally:
        connection.close()
        for name in [TARGET, CANARY, *SCRATCH]:
            try:
                client.delete_table(TableName=name)
            except client.exceptions.ResourceNotFoundException:
                pass


CHECKS = {"count": 0}


def assert_canary(wire: Wire) -> None:
    """The connection still works and a canary item is as written."""
    item = CANARY_ITEMS[CHECKS["count"] % len(CANARY_ITEMS)]
    CHECKS["count"] += 1
    answer = wire.call("GetItem", {"TableName": CANARY, "Key": {"pk": item["pk"]}, "ConsistentRead": True})
    assert answer.get("Item") == item, (answer, REPLAY)


@pytest.mark.parametrize("operation", OPERATIONS)
@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None, phases=[Phase.explicit, Phase.generate, Phase.shrink],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                 HealthCheck.large_base_example, HealthCheck.function_scoped_fixture],
          print_blob=True)
@given(data=st.data())
def test_mutated_requests_get_a_4xx_or_a_200_never_a_5xx(wire: Wire, operation: str, data: st.DataObject) -> None:
    body = mutated_body(data.draw, operation)
    note(f"{operation} body ({len(body)} bytes): {body[:2000]!r}")
    status, answer = wire.post(operation, body)
    assert_dynamodb_answer(status, answer)
    assert_canary(wire)


def test_the_canary_table_is_intact(wire: Wire) -> None:
    answer = wire.call("Scan", {"TableName": CANARY, "ConsistentRead": True})
    assert sorted(answer["Items"], key=lambda item: item["pk"]["S"]) == sorted(
        CANARY_ITEMS, key=lambda item: item["pk"]["S"])


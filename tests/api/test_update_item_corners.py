"""UpdateItem corner cases (issue 17): ADD and DELETE type mismatches, nested
paths into missing parents (on an item and on a missing item), list indexes
past the end, nested list_append, with ReturnValues where it matters.

Behaviour from ScyllaDB's test_update_expression.py (a suite run against
DynamoDB); message texts from users' captures of the service (the ADD/DELETE
operand texts with their typeSet, "The document path provided in the update
expression is invalid for update", "An operand in the update expression has
an incorrect data type"). Every assertion takes the type and whole message.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

INVALID_PATH = ("ValidationException", "The document path provided in the update expression is invalid for update")
WRONG_TYPE = ("ValidationException", "An operand in the update expression has an incorrect data type")


def operand_refused(operator: str, operand_type: str) -> tuple[str, str]:
    """UpdateItem's text, in the request envelope; the service names ADD's type
    set for DELETE too (floci's captures of the service, eu-west-2, 2026-09-17)."""
    return ("ValidationException", "1 validation error detected: Invalid UpdateExpression: Incorrect operand type "
            f"for operator or function; operator: {operator}, operand type: {operand_type}, "
            "typeSet: ALLOWED_FOR_ADD_OPERAND")


@pytest.fixture
def table(make_table: Any) -> str:
    return str(make_table(sk=None))


def new_key() -> dict[str, Any]:
    return {"pk": {"S": uuid.uuid4().hex}}


def update(client: Any, table: str, key: dict[str, Any], expression: str, **values: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"TableName": table, "Key": key, "UpdateExpression": expression}
    if values:
        arguments["ExpressionAttributeValues"] = values
    return dict(client.update_item(**arguments, ReturnValues="ALL_NEW"))


def refused(client: Any, table: str, key: dict[str, Any], expression: str, **values: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        update(client, table, key, expression, **values)
    return error_of(excinfo)


def stored(client: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return item


@pytest.fixture
def item(client: Any, table: str) -> dict[str, Any]:
    key = new_key()
    client.put_item(TableName=table, Item={
        **key, "s": {"S": "text"}, "n": {"N": "1"}, "ss": {"SS": ["a"]}, "ns": {"NS": ["1"]},
        "l": {"L": [{"S": "one"}, {"S": "two"}, {"S": "three"}]}, "m": {"M": {"x": {"N": "1"}}},
    })
    return key


@pytest.mark.parametrize(
    ("expression", "value", "expected"),
    [
        ("ADD n :v", {"S": "x"}, operand_refused("ADD", "STRING")),
        ("ADD newattr :v", {"L": [{"N": "1"}]}, operand_refused("ADD", "LIST")),
        ("ADD newattr :v", {"M": {}}, operand_refused("ADD", "MAP")),
        ("ADD newattr :v", {"BOOL": True}, operand_refused("ADD", "BOOL")),
        ("ADD newattr :v", {"NULL": True}, operand_refused("ADD", "NULL")),
        ("ADD s :v", {"N": "1"}, WRONG_TYPE),
        ("ADD n :v", {"SS": ["x"]}, WRONG_TYPE),
        ("ADD ss :v", {"NS": ["1"]}, WRONG_TYPE),
        ("ADD l :v", {"NS": ["1"]}, WRONG_TYPE),
        ("DELETE ss :v", {"S": "a"}, operand_refused("DELETE", "STRING")),
        ("DELETE ns :v", {"N": "1"}, operand_refused("DELETE", "NUMBER")),
        ("DELETE l :v", {"L": []}, operand_refused("DELETE", "LIST")),
        ("DELETE ss :v", {"NS": ["1"]}, WRONG_TYPE),
        ("DELETE n :v", {"NS": ["1"]}, WRONG_TYPE),
        ("DELETE s :v", {"SS": ["a"]}, WRONG_TYPE),
        ("DELETE ss :v", {"SS": []}, ("ValidationException", "1 validation error detected: ExpressionAttributeValues "
                                      "contains invalid value: One or more parameter values were invalid: An string "
                                      "set  may not be empty for key :v")),
    ],
)
def test_add_and_delete_type_mismatches(
    client: Any, table: str, item: dict[str, Any], expression: str, value: dict[str, Any], expected: tuple[str, str]
) -> None:
    before = stored(client, table, item)
    assert refused(client, table, item, expression, **{":v": value}) == expected
    assert stored(client, table, item) == before


def test_add_and_delete_on_a_nested_path(client: Any, table: str, item: dict[str, Any]) -> None:
    assert update(client, table, item, "ADD m.x :v", **{":v": {"N": "2"}})["Attributes"]["m"] == {"M": {"x": {"N": "3"}}}
    assert update(client, table, item, "ADD m.y :v", **{":v": {"SS": ["q"]}})["Attributes"]["m"]["M"]["y"] == {"SS": ["q"]}
    assert refused(client, table, item, "ADD m.a.b :v", **{":v": {"N": "2"}}) == INVALID_PATH
    assert refused(client, table, item, "DELETE s.a :v", **{":v": {"SS": ["a"]}}) == INVALID_PATH


def test_nested_paths_into_missing_or_scalar_parents(client: Any, table: str, item: dict[str, Any]) -> None:
    for expression in ("SET m.a.b = :v", "SET nope.a = :v", "SET s.a = :v", "SET s[0] = :v", "SET l[0].a = :v",
                       "SET l[9].a = :v", "SET nope[0] = :v"):
        assert refused(client, table, item, expression, **{":v": {"N": "2"}}) == INVALID_PATH, expression
    for expression in ("REMOVE m.a.b", "REMOVE nope.a", "REMOVE s.a", "REMOVE s[0]", "REMOVE nope[0]"):
        assert refused(client, table, item, expression) == INVALID_PATH, expression
    # A missing leaf under an existing parent is no error: nothing changes.
    before = stored(client, table, item)
    update(client, table, item, "REMOVE m.y, l[7], nope")
    assert stored(client, table, item) == before


def test_on_a_missing_item_remove_ignores_its_paths_and_set_does_not(client: Any, table: str) -> None:
    key = new_key()
    for expression in ("REMOVE x.y, z", "REMOVE x[0]"):
        answer = client.update_item(TableName=table, Key=key, UpdateExpression=expression, ReturnValues="ALL_NEW")
        assert "Attributes" not in answer and stored(client, table, key) is None
    answer = client.update_item(TableName=table, Key=key, UpdateExpression="REMOVE x.y", ReturnValues="UPDATED_NEW")
    assert "Attributes" not in answer and stored(client, table, key) is None
    for expression in ("SET c.c = :v", "SET b[0] = :v", "SET a = :v, c.d = :v"):
        assert refused(client, table, key, expression, **{":v": {"N": "7"}}) == INVALID_PATH, expression
    assert stored(client, table, key) is None
    # With a SET beside it the item is created, the REMOVE of a nested path still ignored.
    answer = update(client, table, key, "SET a = :v REMOVE b.c", **{":v": {"N": "1"}})
    assert answer["Attributes"] == {**key, "a": {"N": "1"}} == stored(client, table, key)


def test_list_indexes_past_the_end_append_in_index_order(client: Any, table: str, item: dict[str, Any]) -> None:
    update(client, table, item, "SET l[7] = :v", **{":v": {"S": "hello"}})
    update(client, table, item, "SET l[84] = :a, l[37] = :b, l[17] = :c, l[50] = :d",
           **{":a": {"S": "a1"}, ":b": {"S": "a2"}, ":c": {"S": "a3"}, ":d": {"S": "a4"}})
    listed = stored(client, table, item)
    assert listed is not None
    assert [element["S"] for element in listed["l"]["L"]] == ["one", "two", "three", "hello", "a3", "a2", "a4", "a1"]
    key = new_key()
    client.put_item(TableName=table, Item={**key, "a": {"L": [{"N": str(number)} for number in range(2, 8)]}})
    # Indexes name positions before the update: REMOVE a[1] does not shift SET a[3].
    answer = update(client, table, key, "SET a[3] = :v REMOVE a[1]", **{":v": {"N": "17"}})
    assert [element["N"] for element in answer["Attributes"]["a"]["L"]] == ["2", "4", "17", "6", "7"]


def test_list_append_may_not_nest_list_append(client: Any, table: str, item: dict[str, Any]) -> None:
    values = {":a": {"L": [{"S": "x"}]}, ":b": {"L": []}, ":c": {"L": [{"S": "y"}]}}
    assert refused(client, table, item, "SET l = list_append(list_append(:a, :b), :c)", **values) == (
        "ValidationException",
        "1 validation error detected: Invalid UpdateExpression: The function is not allowed to be used this way in an expression; "
        "function: list_append")
    del values[":c"]
    answer = update(client, table, item, "SET fresh = list_append(if_not_exists(fresh, :b), :a)", **values)
    assert answer["Attributes"]["fresh"] == {"L": [{"S": "x"}]}

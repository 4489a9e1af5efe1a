"""ExpressionContext (placeholder maps), unused placeholders and the parse cache."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import (
    ExpressionContext,
    cache,
    compile_condition,
    compile_key_condition,
    compile_projection,
    compile_update,
)
from dynastore.expressions.resolve import java_hash_set_order


def message(names: Any, values: Any) -> str:
    with pytest.raises(ValidationException) as raised:
        ExpressionContext(names, values)
    return str(raised.value.message)


@pytest.mark.parametrize(
    ("names", "values", "expected"),
    [
        ({}, None, "ExpressionAttributeNames must not be empty"),
        (None, {}, "ExpressionAttributeValues must not be empty"),
        ({"a": "a"}, None, 'ExpressionAttributeNames contains invalid key: Syntax error; key: "a"'),
        ({"#": "a"}, None, 'ExpressionAttributeNames contains invalid key: Syntax error; key: "#"'),
        ({"#a-b": "a"}, None, 'ExpressionAttributeNames contains invalid key: Syntax error; key: "#a-b"'),
        ({"#a": ""}, None, "ExpressionAttributeNames contains invalid value: Empty attribute name for key #a"),
        (None, {"b": {"S": "a"}}, 'ExpressionAttributeValues contains invalid key: Syntax error; key: "b"'),
        (None, {":b": {"S": "a"}, "b": {"S": "a"}}, 'ExpressionAttributeValues contains invalid key: Syntax error; key: "b"'),
        (None, {":b": {}}, "ExpressionAttributeValues contains invalid value: Supplied AttributeValue is empty, must contain exactly one of the supported datatypes for key :b"),
        (None, {":b": {"S": "a", "N": "1"}}, "ExpressionAttributeValues contains invalid value: Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes for key :b"),
        # Refused by the request parser before the per-key check: no wrapper (dynoxide's capture).
        (None, {":b": {"NULL": False}}, "One or more parameter values were invalid: Null attribute value types must have the value of true"),
        (None, {":b": {"SS": []}}, "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: An string set  may not be empty for key :b"),
        (None, {":b": {"SS": ["a", "a"]}}, "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: Input collection [a, a] contains duplicates. for key :b"),
        (None, {":b": {"N": "b"}}, "ExpressionAttributeValues contains invalid value: The parameter cannot be converted to a numeric value: b for key :b"),
        (None, {":b": {"NS": ["1", "1"]}}, "ExpressionAttributeValues contains invalid value: Input collection contains duplicates for key :b"),
        ({"#" + "a" * 255: "a"}, None, "ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: 256"),
    ],
)
def test_invalid_maps(names: Any, values: Any, expected: str) -> None:
    assert message(names, values) == expected


def test_values_are_normalized() -> None:
    context = ExpressionContext(None, {":n": {"N": "01.50"}})
    assert context.values[":n"] == {"N": "1.5"}
    assert compile_condition("a = :n", context).evaluate({"a": {"N": "1.5"}})


def unused(context: ExpressionContext) -> str:
    with pytest.raises(ValidationException) as raised:
        context.check_all_used()
    return str(raised.value.message)


def test_unused_names_are_reported_before_unused_values() -> None:
    context = ExpressionContext({"#a": "a", "#b": "b"}, {":a": {"S": "a"}, ":c": {"S": "c"}})
    compile_condition("#a = :a", context)
    assert unused(context) == "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}"


def test_unused_values_across_several_expressions() -> None:
    context = ExpressionContext({"#a": "a"}, {":a": {"S": "a"}, ":b": {"S": "a"}, ":c": {"S": "a"}})
    compile_update("REMOVE #a", context)
    compile_condition("a = :b", context)
    assert unused(context) == "Value provided in ExpressionAttributeValues unused in expressions: keys: {:a, :c}"


def test_everything_used() -> None:
    context = ExpressionContext({"#p": "pk", "#x": "x"}, {":p": {"S": "p"}, ":f": {"N": "1"}})
    compile_key_condition("#p = :p", context, "pk", None)
    compile_condition("x > :f", context, "FilterExpression")
    compile_projection("#x", context)
    context.check_all_used()


def test_placeholders_of_a_failed_expression_are_not_needed() -> None:
    context = ExpressionContext(None, {":a": {"S": "a"}})
    with pytest.raises(ValidationException):
        compile_condition("a = :a AND b = :missing", context)


def test_java_hash_set_order() -> None:
    # Java: new HashSet<>(List.of(":a", ":c")) iterates [:a, :c]; with #b, #a -> [#a, #b].
    assert java_hash_set_order([":c", ":a"]) == [":a", ":c"]
    assert java_hash_set_order(["#b", "#a"]) == ["#a", "#b"]
    assert sorted(java_hash_set_order([f":v{i}" for i in range(40)])) == sorted(f":v{i}" for i in range(40))


def test_parse_cache_parses_each_text_once() -> None:
    cache.clear()
    for index in range(5):
        context = ExpressionContext(None, {":v": {"N": str(index)}})
        condition = compile_condition("a = :v", context)
        assert condition.evaluate({"a": {"N": str(index)}})
        compile_update("SET a = :v", context)
    assert cache.condition.cache_info().misses == 1
    assert cache.condition.cache_info().hits == 4
    assert cache.update.cache_info().misses == 1


def test_parse_cache_is_bounded() -> None:
    from dynastore import limits

    assert cache.condition.cache_info().maxsize == limits.EXPRESSION_PARSE_CACHE_ENTRIES
    assert cache.update.cache_info().maxsize == limits.EXPRESSION_PARSE_CACHE_ENTRIES
    assert cache.projection.cache_info().maxsize == limits.EXPRESSION_PARSE_CACHE_ENTRIES


def test_placeholders_bind_per_request_with_a_cached_parse() -> None:
    first = compile_condition("#n = :v", ExpressionContext({"#n": "a"}, {":v": {"S": "1"}}))
    second = compile_condition("#n = :v", ExpressionContext({"#n": "b"}, {":v": {"S": "2"}}))
    item = {"a": {"S": "1"}, "b": {"S": "2"}}
    assert first.evaluate(item) and second.evaluate(item)
    assert not first.evaluate({"a": {"S": "2"}})


def test_identical_requests_share_one_compiled_plan() -> None:
    def plan(value: str) -> Any:
        context = ExpressionContext({"#c": "count"}, {":one": {"N": value}})
        result = compile_update("SET #c = #c + :one", context)
        context.check_all_used()  # placeholders count as used on a cache hit too
        return result

    assert plan("1") is plan("1")
    assert plan("1") is not plan("2")
    assert plan("2").apply({"count": {"N": "1"}}) == {"count": {"N": "3"}}


def test_compiled_conditions_are_cached_per_parameter_name() -> None:
    context = ExpressionContext(None, None)
    first = compile_condition("attribute_not_exists(pk)", context, "ConditionExpression")
    assert first is compile_condition("attribute_not_exists(pk)", context, "ConditionExpression")
    assert first is not compile_condition("attribute_not_exists(pk)", context, "FilterExpression")


def test_big_values_are_not_kept_in_the_cache() -> None:
    big = {":v": {"S": "x" * 5000}}
    first = compile_condition("a = :v", ExpressionContext(None, big))
    second = compile_condition("a = :v", ExpressionContext(None, big))
    assert first is not second
    assert first.evaluate({"a": {"S": "x" * 5000}})


def test_cached_plans_do_not_share_state_between_items() -> None:
    values = {":m": {"M": {"k": {"S": "v"}}}, ":l": {"L": [{"N": "1"}]}}
    for _ in range(2):
        context = ExpressionContext(None, values)
        plan = compile_update("SET m = :m, l = list_append(:l, :l)", context)
        new = plan.apply({})
        assert new == {"m": {"M": {"k": {"S": "v"}}}, "l": {"L": [{"N": "1"}, {"N": "1"}]}}
        again = compile_update("SET m.x = :l", ExpressionContext(None, {":l": {"L": []}})).apply(new)
        assert again["m"] == {"M": {"k": {"S": "v"}, "x": {"L": []}}}
        assert values[":m"] == {"M": {"k": {"S": "v"}}}  # the request's value is untouched


# --- whole write requests (ops/put_item.write_expressions) ---------------------------


def _conditional_update(values: Any, names: Any = None) -> dict[str, Any]:
    return {
        "TableName": "t",
        "Key": {"pk": {"S": "a"}},
        "UpdateExpression": "SET #c = #c + :one",
        "ConditionExpression": "#v = :v",
        "ExpressionAttributeNames": names or {"#c": "count", "#v": "version"},
        "ExpressionAttributeValues": values,
    }


def test_identical_write_requests_share_their_compiled_expressions() -> None:
    from dynastore.ops.put_item import write_expressions

    cache.clear()
    values = {":one": {"N": "1"}, ":v": {"N": "7"}}
    first = write_expressions("UpdateItem", _conditional_update(values), with_update=True)
    again = write_expressions("UpdateItem", _conditional_update(dict(values)), with_update=True)
    assert again is first
    other = write_expressions(
        "UpdateItem", _conditional_update({":one": {"N": "1"}, ":v": {"N": "8"}}), with_update=True
    )
    assert other is not first
    condition, update = other
    assert condition is not None and update is not None
    assert condition.evaluate({"version": {"N": "8"}})
    assert not condition.evaluate({"version": {"N": "7"}})


def test_a_cached_write_does_not_answer_for_a_differently_typed_value() -> None:
    from dynastore.errors import SerializationException
    from dynastore.ops.put_item import write_expressions

    cache.clear()
    write_expressions("UpdateItem", _conditional_update({":one": {"N": "1"}, ":v": {"N": "7"}}), True)
    # The same digits sent as a JSON number: refused as if nothing were cached.
    with pytest.raises(SerializationException):
        write_expressions("UpdateItem", _conditional_update({":one": {"N": 1}, ":v": {"N": "7"}}), True)


def test_a_refused_write_is_refused_every_time() -> None:
    from dynastore.ops.put_item import write_expressions

    cache.clear()
    unused = {":one": {"N": "1"}, ":v": {"N": "7"}, ":spare": {"S": "x"}}
    for _ in range(2):
        with pytest.raises(ValidationException, match="unused in expressions: keys: {:spare}"):
            write_expressions("UpdateItem", _conditional_update(unused), with_update=True)

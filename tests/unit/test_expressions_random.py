"""Randomized cross-check: the specialized comparison paths of evaluate.py
against DynamoDB's comparison rules spelled out directly on the values.

The seed is printed on failure; set EXPRESSIONS_SEED to replay one.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

from dynastore.expressions import ExpressionContext, compile_condition
from dynastore.types.attribute_value import compare_values, values_equal

SEED = int(os.environ.get("EXPRESSIONS_SEED", random.randrange(1 << 30)))

SAMPLES: list[dict[str, Any]] = [
    {"S": ""}, {"S": "a"}, {"S": "ab"}, {"S": "b"}, {"S": "\u00e9"}, {"S": "z"},
    {"N": "0"}, {"N": "1"}, {"N": "-1"}, {"N": "1.5"}, {"N": "10"}, {"N": "99999999999999999999"},
    {"N": "0.001"}, {"B": "AA=="}, {"B": "AQ=="}, {"B": "AQI="}, {"B": "/w=="},
    {"BOOL": True}, {"BOOL": False}, {"NULL": True},
    {"SS": ["a", "b"]}, {"SS": ["b", "a"]}, {"NS": ["1", "2"]}, {"BS": ["AQ=="]},
    {"L": [{"S": "a"}]}, {"L": []}, {"M": {"k": {"N": "1"}}}, {"M": {}},
]


def expected(operator: str, left: Any, right: Any) -> bool:
    if operator == "=":
        return left is not None and right is not None and values_equal(left, right)
    if operator == "<>":
        return not expected("=", left, right)
    if left is None or right is None:
        return False
    order = compare_values(left, right)
    if order is None:
        return False
    return {"<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0}[operator]


@pytest.mark.parametrize("round_number", range(20))
def test_comparisons_match_the_rules(round_number: int) -> None:
    rng = random.Random(SEED + round_number)
    for _ in range(40):
        operator = rng.choice(["=", "<>", "<", "<=", ">", ">="])
        constant = rng.choice(SAMPLES)
        stored = rng.choice(SAMPLES + [None])  # type: ignore[list-item]
        scalar = next(iter(constant)) in ("S", "N", "B")
        if operator not in ("=", "<>") and not scalar:
            continue  # refused at compile time (operand type)
        value_on_left = rng.random() < 0.5
        text = f":v {operator} a" if value_on_left else f"a {operator} :v"
        item = {} if stored is None else {"a": stored}
        condition = compile_condition(text, ExpressionContext(None, {":v": constant}))
        left, right = (constant, stored) if value_on_left else (stored, constant)
        assert condition.evaluate(item) is expected(operator, left, right), (SEED, text, item, constant)


@pytest.mark.parametrize("round_number", range(10))
def test_between_and_in_match_the_rules(round_number: int) -> None:
    rng = random.Random(SEED + 1000 + round_number)
    scalars = [sample for sample in SAMPLES if next(iter(sample)) in ("S", "N", "B")]
    for _ in range(40):
        low, high = sorted(rng.sample(scalars, 2), key=lambda v: (next(iter(v)), 0))
        stored = rng.choice(SAMPLES)
        item = {"a": stored}
        if next(iter(low)) == next(iter(high)) and (compare_values(low, high) or 0) <= 0:
            condition = compile_condition(
                "a BETWEEN :low AND :high", ExpressionContext(None, {":low": low, ":high": high})
            )
            lower, upper = compare_values(low, stored), compare_values(stored, high)
            want = lower is not None and upper is not None and lower <= 0 and upper <= 0
            assert condition.evaluate(item) is want, (SEED, low, high, stored)
        candidates = rng.sample(SAMPLES, 3)
        values = {f":c{i}": candidate for i, candidate in enumerate(candidates)}
        condition = compile_condition("a IN (:c0, :c1, :c2)", ExpressionContext(None, values))
        want = any(values_equal(stored, candidate) for candidate in candidates)
        assert condition.evaluate(item) is want, (SEED, stored, candidates)

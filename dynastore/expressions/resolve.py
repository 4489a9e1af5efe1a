"""ExpressionAttributeNames / ExpressionAttributeValues of one request.

An ``ExpressionContext`` checks both maps the way DynamoDB does, hands out
``#name`` and ``:value`` substitutions to every expression of the request and
remembers which were used, so the operation can refuse unused ones after the
last expression compiled.
"""

from __future__ import annotations

import re
from typing import Any

from dynastore import limits
from dynastore.errors import ValidationException
from dynastore.types.attribute_value import (
    MESSAGE_NULL_NOT_TRUE,
    RequestValidationError,
    validate_attribute_value,
)

_NAME_KEY = re.compile(r"#[0-9A-Za-z_]+")
_VALUE_KEY = re.compile(r":[0-9A-Za-z_]+")


def java_hash_set_order(keys: list[str], total: int | None = None) -> list[str]:
    """``keys`` in the order a java.util.HashSet built from ``total`` keys lists them.

    DynamoDB names several placeholders in one message in that order
    (``keys: {:b, :a}``), so this is what makes those messages match.
    """
    wanted = max(int((len(keys) if total is None else total) / 0.75) + 1, 16)
    capacity = 1
    while capacity < wanted:
        capacity *= 2

    def slot(key: str) -> int:
        value = 0
        data = key.encode("utf-16-be")  # Java hashes UTF-16 code units
        for index in range(0, len(data), 2):
            value = (31 * value + (data[index] << 8 | data[index + 1])) & 0xFFFFFFFF
        return (value ^ (value >> 16)) & (capacity - 1)

    return [key for _, _, key in sorted((slot(key), i, key) for i, key in enumerate(keys))]


class ExpressionContext:
    """Holds ExpressionAttributeNames/Values of ONE request; tracks which were used."""

    __slots__ = ("names", "values", "used_names", "used_values")

    def __init__(self, names: dict[str, str] | None, values: dict[str, dict[str, Any]] | None):
        self.names: dict[str, str] = _checked_names(names) if names is not None else {}
        self.values: dict[str, dict[str, Any]] = (
            _checked_values(values) if values is not None else {}
        )
        self.used_names: set[str] = set()
        self.used_values: set[str] = set()

    @classmethod
    def trusted(
        cls, names: dict[str, str], values: dict[str, dict[str, Any]]
    ) -> ExpressionContext:
        """A context over maps another context already checked (no checks again)."""
        context = cls.__new__(cls)
        context.names, context.values = dict(names), dict(values)
        context.used_names, context.used_values = set(), set()
        return context

    def name(self, placeholder: str) -> str | None:
        """The attribute name behind ``#placeholder`` (marking it used), or None."""
        name = self.names.get(placeholder)
        if name is not None:
            self.used_names.add(placeholder)
        return name

    def value(self, placeholder: str) -> dict[str, Any] | None:
        """The attribute value behind ``:placeholder`` (marking it used), or None."""
        value = self.values.get(placeholder)
        if value is not None:
            self.used_values.add(placeholder)
        return value

    def check_all_used(self) -> None:
        """Refuse placeholders no expression of the request used (names first)."""
        unused_names = [key for key in self.names if key not in self.used_names]
        if unused_names:
            keys = ", ".join(java_hash_set_order(unused_names, len(self.names)))
            raise ValidationException(
                f"Value provided in ExpressionAttributeNames unused in expressions: keys: {{{keys}}}"
            )
        unused_values = [key for key in self.values if key not in self.used_values]
        if unused_values:
            keys = ", ".join(java_hash_set_order(unused_values, len(self.values)))
            raise ValidationException(
                f"Value provided in ExpressionAttributeValues unused in expressions: keys: {{{keys}}}"
            )


def _checked_names(names: dict[str, str]) -> dict[str, str]:
    if not names:
        raise ValidationException("ExpressionAttributeNames must not be empty")
    for key, name in names.items():
        if len(key) > limits.EXPRESSION_ATTRIBUTE_NAME_MAX_BYTES // 4 or not key.isascii():
            size = len(key.encode("utf-8"))
            if size > limits.EXPRESSION_ATTRIBUTE_NAME_MAX_BYTES:
                raise ValidationException(
                    "ExpressionAttributeNames contains invalid key: The expression attribute map "
                    f"contains a key that is too long; size of key: {size}"
                )
        if not _NAME_KEY.fullmatch(key):
            raise ValidationException(
                f'ExpressionAttributeNames contains invalid key: Syntax error; key: "{key}"'
            )
        if not name:  # "" or a JSON null
            raise ValidationException(
                f"ExpressionAttributeNames contains invalid value: Empty attribute name for key {key}"
            )
    return names


def _checked_values(values: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    if not values:
        raise ValidationException("ExpressionAttributeValues must not be empty")
    for key in values:
        if len(key) > limits.EXPRESSION_ATTRIBUTE_NAME_MAX_BYTES // 4 or not key.isascii():
            if len(key.encode("utf-8")) > limits.EXPRESSION_ATTRIBUTE_NAME_MAX_BYTES:
                raise ValidationException(
                    "ExpressionAttributeValues contains invalid key: The expression attribute "
                    "map contains a key that is too long;"
                )
        if not _VALUE_KEY.fullmatch(key):
            raise ValidationException(
                f'ExpressionAttributeValues contains invalid key: Syntax error; key: "{key}"'
            )
    checked: dict[str, dict[str, Any]] | None = None
    try:
        for key, value in values.items():
            normalized = validate_attribute_value(value)
            if normalized is not value:
                if checked is None:
                    checked = dict(values)
                checked[key] = normalized
    except ValidationException:
        _raise_first_invalid_value(values)
    return values if checked is None else checked


def _raise_first_invalid_value(values: dict[str, dict[str, Any]]) -> None:
    """DynamoDB checks the values in its hash set's order; report that first one.
    A ``{"NULL": false}`` is refused earlier, by the request parser, with its
    own text and no per-key wrapper (dynoxide's live capture, eu-west-2)."""
    for value in values.values():
        try:
            validate_attribute_value(value)
        except RequestValidationError as error:
            if error.message == MESSAGE_NULL_NOT_TRUE:
                raise
        except ValidationException:
            pass
    for key in java_hash_set_order(list(values)):
        try:
            validate_attribute_value(values[key])
        except ValidationException as error:
            raise ValidationException(
                f"ExpressionAttributeValues contains invalid value: {error.message} for key {key}"
            ) from None

"""Attribute values on the wire: validation, normalisation, equality, order.

An attribute value is a one-key dict exactly as DynamoDB's JSON carries it:
``{"S": "text"}``, ``{"N": "1.5"}``, ``{"B": "<base64>"}``, ``{"BOOL": true}``,
``{"NULL": true}``, ``{"M": {...}}``, ``{"L": [...]}``, ``{"SS": [...]}``,
``{"NS": [...]}``, ``{"BS": [...]}``.

``validate_attribute_value`` checks one value the way DynamoDB does and returns
it normalized: numbers in DynamoDB's normal form (so equal numbers are equal
strings), everything else as given. When nothing needed changing the very same
object comes back, so a typical write allocates nothing here.

Two error families, as DynamoDB reports them:
- a JSON value of the wrong kind (``{"S": 5}``, ``{"L": {}}``) fails while the
  request is deserialized: ``SerializationException`` with the parser's
  wording ("NUMBER_VALUE cannot be converted to String"). The service parses
  the whole request before validating, so such an error anywhere in a value
  wins over a broken rule earlier in it (``check_item_shape``);
- a well-formed value that breaks a rule (empty set, duplicates, bad number,
  too deep) is a ``ValidationException``; the request-model ones among them
  are ``RequestValidationError`` (see there).

Messages are DynamoDB's, as pinned by dynalite's conformance tests and
dynoxide; note the double space in "An string set  may not be empty" and the
missing space in "...]of type BS contains duplicates." — both are real.

Empty strings and binaries are valid here: since 2020 DynamoDB accepts them in
every non-key attribute (and inside sets, lists and maps). Key attributes are
checked by the callers (engine/schema.py, size.key_value_size).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from dynastore import limits
from dynastore.errors import SerializationException, ValidationException
from dynastore.types.number import compare_numbers, is_short_normal, normalize_number

TYPE_KEYS: tuple[str, ...] = ("S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS")
SCALAR_TYPES = frozenset(("S", "N", "B", "BOOL", "NULL"))
SET_TYPES = frozenset(("SS", "NS", "BS"))
KEY_TYPES = frozenset(("S", "N", "B"))
_BOOLEAN_TYPES = frozenset(("BOOL", "NULL"))
_NESTING_MAX_DEPTH = limits.NESTING_MAX_DEPTH

_INVALID = "One or more parameter values were invalid: "
MESSAGE_EMPTY = (
    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
)
MESSAGE_MULTIPLE_TYPES = (
    "Supplied AttributeValue has more than one datatypes set, "
    "must contain exactly one of the supported datatypes"
)
MESSAGE_NULL_NOT_TRUE = _INVALID + "Null attribute value types must have the value of true"
MESSAGE_EMPTY_STRING_SET = _INVALID + "An string set  may not be empty"
MESSAGE_EMPTY_NUMBER_SET = _INVALID + "An number set  may not be empty"
MESSAGE_EMPTY_BINARY_SET = _INVALID + "Binary sets should not be empty"
MESSAGE_NULL_IN_STRING_SET = _INVALID + "An string set may not have a empty string as a member"
MESSAGE_NULL_IN_BINARY_SET = _INVALID + "Binary sets may not contain null or empty values"
MESSAGE_NUMBER_SET_DUPLICATES = "Input collection contains duplicates"
MESSAGE_NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
MESSAGE_NESTING = (
    "Nesting Levels have exceeded supported limits: "
    "Attributes in the item have nested levels beyond supported limit"
)


class RequestValidationError(ValidationException):
    """A ValidationException from DynamoDB's request-model checks: empty sets,
    duplicate set members, ``{"NULL": false}``.

    On the wire it is a plain ValidationException. It is a subclass only so
    PutItem/UpdateItem can tell it apart: DynamoDB wraps exactly these in the
    envelope ``1 validation error detected: <message>`` for those two
    operations (dynoxide captured this from the live service) and reports them
    bare everywhere else.
    """

    @classmethod
    def type_name(cls) -> str:
        return "ValidationException"


SetValidationError = RequestValidationError
"""The first name of RequestValidationError, kept for the ops importing it."""


def _string_set_duplicates(members: list[str]) -> RequestValidationError:
    return RequestValidationError(
        f"{_INVALID}Input collection [{', '.join(members)}] contains duplicates."
    )


def _binary_set_duplicates(members: list[str]) -> RequestValidationError:
    return RequestValidationError(
        f"{_INVALID}Input collection [{', '.join(members)}]of type BS contains duplicates."
    )


# --- SerializationException wording ---------------------------------------------
# The service deserializes the request before validating it; a JSON value of
# the wrong kind gets its parser's message (as pinned by dynalite's current
# conformance helpers and dynoxide). ``orjson`` keeps the JSON number kinds
# apart: ``int`` is the parser's NUMBER_VALUE, ``float`` its DECIMAL_VALUE.

_START_OF_STRUCTURE = "Start of structure or map found where not expected"
_UNEXPECTED_FIELD = "Unexpected field type"
_ATTRIBUTE_VALUE_CLASS = "com.amazonaws.dynamodb.v20120810.AttributeValue"


def _token_name(value: Any) -> str | None:
    """The parser's name for a scalar JSON token, None for lists and objects."""
    if value is True:
        return "TRUE_VALUE"
    if value is False:
        return "FALSE_VALUE"
    if isinstance(value, int):
        return "NUMBER_VALUE"
    if isinstance(value, float):
        return "DECIMAL_VALUE"
    if isinstance(value, str):
        return "STRING_VALUE"
    return None


def _not_a(target: str, value: Any) -> SerializationException:
    """The error for a JSON value where a ``target`` ("String", "Boolean",
    "Blob") belongs."""
    if isinstance(value, dict):
        return SerializationException(_START_OF_STRUCTURE)
    if isinstance(value, list):
        java_class = "java.nio.ByteBuffer" if target == "Blob" else f"java.lang.{target}"
        return SerializationException(f"Unrecognized collection type class {java_class}")
    if target == "Blob":
        return SerializationException("only base-64-encoded strings are convertible to bytes")
    if target == "Boolean" and isinstance(value, str):
        return SerializationException("Unexpected token received from parser")
    return SerializationException(f"{_token_name(value)} cannot be converted to {target}")


def _expected_list(value: Any) -> SerializationException:
    """A set or L member that is not a JSON array."""
    if isinstance(value, dict):
        return SerializationException(_START_OF_STRUCTURE)
    return SerializationException(_UNEXPECTED_FIELD)


def _expected_map(value: Any) -> SerializationException:
    """An M member (or an Item/Key parameter) that is not a JSON object."""
    if isinstance(value, list):
        return SerializationException(
            f"Unrecognized collection type java.util.Map<java.lang.String, {_ATTRIBUTE_VALUE_CLASS}>"
        )
    return SerializationException(_UNEXPECTED_FIELD)


def _expected_structure(value: Any) -> SerializationException:
    """A map value or list element that is not an attribute value object."""
    if isinstance(value, list):
        return SerializationException(
            f"Unrecognized collection type class {_ATTRIBUTE_VALUE_CLASS}"
        )
    return SerializationException("Unexpected value type in payload")


_BOOLEAN_WORDS = {"TRUE": True, "1": True, "YES": True, "FALSE": False, "0": False, "NO": False}


def _check_boolean(value: Any) -> bool:
    """A JSON value where the service expects a Boolean. Its parser also takes
    a few words in any case ("true", "yes", "1", "no", ...), as ops/shapes.py
    does; other strings and numbers are SerializationExceptions."""
    if type(value) is bool:
        return value
    if type(value) is str and value.upper() in _BOOLEAN_WORDS:
        return _BOOLEAN_WORDS[value.upper()]
    raise _not_a("Boolean", value)


# --- base64 ----------------------------------------------------------------------

_BASE64_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BASE64_VALUES = {character: value for value, character in enumerate(_BASE64_DIGITS)}


def decode_base64(text: str) -> bytes:
    """Decode a wire binary, or raise DynamoDB's SerializationException.

    Only canonical base64 is accepted (length a multiple of 4, padding only at
    the end, unused bits zero), so two equal binaries are equal texts.
    """
    if len(text) % 4:  # binascii's strict mode lets "0000=" through
        raise _base64_error(text)
    try:
        decoded = binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        raise _base64_error(text) from None
    if text[-1:] == "=" and _BASE64_VALUES[text[-3 if text[-2] == "=" else -2]] & (
        0x0F if text[-2] == "=" else 0x03
    ):
        # Padded, and the bits past the last byte are not zero: "YR==" would
        # decode like "YQ==", so the service refuses it.
        raise _base64_error(text)
    return decoded


def _base64_error(text: str) -> SerializationException:
    """The service's complaint (same texts as ops/shapes.py): a length that is
    not a multiple of 4, or else anything undecodable, misplaced padding and
    bits set past the last byte ("YR==")."""
    if len(text) % 4:
        return SerializationException(
            f"Base64 encoded length is expected a multiple of 4 bytes but found: {len(text)}"
        )
    return SerializationException("Invalid last non-pad Base64 character dectected")


# --- validation -----------------------------------------------------------------


def validate_item(item: Any) -> dict[str, Any]:
    """Validate every attribute of an item; return the normalized item.

    The same dict comes back when no value changed. Key presence, key types and
    the item size limit are the caller's business (size.item_size).
    """
    if type(item) is not dict:
        raise _expected_map(item)
    try:
        changed: dict[str, Any] | None = None
        for name, value in item.items():
            normalized = _validate_value(value, 0)
            if normalized is not value:
                if changed is None:
                    changed = dict(item)
                changed[name] = normalized
    except SerializationException:
        raise
    except ValidationException:
        check_item_shape(item)
        raise
    return item if changed is None else changed


def validate_attribute_value(value: Any, depth: int = 0) -> dict[str, Any]:
    """Validate one wire attribute value; return it normalized (see module doc).

    ``depth`` is the nesting level of ``value`` (0 for a top-level attribute);
    DynamoDB accepts levels 0 .. NESTING_MAX_DEPTH - 1.
    """
    try:
        return _validate_value(value, depth)
    except SerializationException:
        raise
    except ValidationException:
        check_attribute_value_shape(value)
        raise


def _validate_value(value: Any, depth: int) -> dict[str, Any]:
    """The recursive core of validate_attribute_value."""
    if type(value) is not dict or len(value) != 1:
        return _validate_unusual_shape(value, depth)
    if depth >= _NESTING_MAX_DEPTH:
        raise ValidationException(MESSAGE_NESTING)
    ((type_key, inner),) = value.items()
    # Fast paths for the commonest values: nothing to normalize, no calls.
    if type(inner) is str:
        if type_key == "S" or (type_key == "N" and is_short_normal(inner)):
            return value
    elif inner is True and type_key in _BOOLEAN_TYPES:
        return value
    validator = _VALIDATORS.get(type_key)
    if validator is None or inner is None:
        raise ValidationException(MESSAGE_EMPTY)
    normalized = validator(inner, depth)
    return value if normalized is inner else {type_key: normalized}


def _validate_unusual_shape(value: Any, depth: int) -> dict[str, Any]:
    """Not a one-key dict. Unknown keys and JSON nulls are ignored (the
    service's deserializer drops them); every present type is validated, in
    order, before "more than one datatypes" is reported (as DynamoDB does)."""
    if type(value) is not dict:
        if value is None:
            raise ValidationException(MESSAGE_EMPTY)
        raise _expected_structure(value)
    if depth >= _NESTING_MAX_DEPTH:
        raise ValidationException(MESSAGE_NESTING)
    present = [
        (type_key, inner)
        for type_key, inner in value.items()
        if inner is not None and type_key in _VALIDATORS
    ]
    if not present:
        raise ValidationException(MESSAGE_EMPTY)
    normalized = [(type_key, _VALIDATORS[type_key](inner, depth)) for type_key, inner in present]
    if len(normalized) > 1:
        raise ValidationException(MESSAGE_MULTIPLE_TYPES)
    return {normalized[0][0]: normalized[0][1]}


def _validate_string(inner: Any, depth: int) -> str:
    if type(inner) is not str:
        raise _not_a("String", inner)
    return inner


def _validate_number(inner: Any, depth: int) -> str:
    if type(inner) is not str:
        raise _not_a("String", inner)
    normalized = normalize_number(inner)
    return inner if normalized == inner else normalized


def _validate_binary(inner: Any, depth: int) -> str:
    if type(inner) is not str:
        raise _not_a("Blob", inner)
    decode_base64(inner)
    return inner


def _validate_bool(inner: Any, depth: int) -> bool:
    return _check_boolean(inner)


def _validate_null(inner: Any, depth: int) -> bool:
    if _check_boolean(inner):
        return True
    raise RequestValidationError(MESSAGE_NULL_NOT_TRUE)


def _validate_map(inner: Any, depth: int) -> dict[str, Any]:
    if type(inner) is not dict:
        raise _expected_map(inner)
    changed: dict[str, Any] | None = None
    child_depth = depth + 1
    for name, child in inner.items():
        normalized = _validate_value(child, child_depth)
        if normalized is not child:
            if changed is None:
                changed = dict(inner)
            changed[name] = normalized
    return inner if changed is None else changed


def _validate_list(inner: Any, depth: int) -> list[Any]:
    if type(inner) is not list:
        raise _expected_list(inner)
    changed: list[Any] | None = None
    child_depth = depth + 1
    for index, child in enumerate(inner):
        normalized = _validate_value(child, child_depth)
        if normalized is not child:
            if changed is None:
                changed = list(inner)
            changed[index] = normalized
    return inner if changed is None else changed


def _validate_string_set(inner: Any, depth: int) -> list[str]:
    if type(inner) is not list:
        raise _expected_list(inner)
    if not inner:
        raise RequestValidationError(MESSAGE_EMPTY_STRING_SET)
    for member in inner:
        if type(member) is not str:
            if member is None:
                raise ValidationException(MESSAGE_NULL_IN_STRING_SET)
            raise _not_a("String", member)
    if len(set(inner)) != len(inner):
        raise _string_set_duplicates(inner)
    return inner


def _validate_binary_set(inner: Any, depth: int) -> list[str]:
    if type(inner) is not list:
        raise _expected_list(inner)
    if not inner:
        raise RequestValidationError(MESSAGE_EMPTY_BINARY_SET)
    for member in inner:
        if type(member) is not str:
            if member is None:
                raise ValidationException(MESSAGE_NULL_IN_BINARY_SET)
            raise _not_a("Blob", member)
        decode_base64(member)
    # Canonical base64 (decode_base64) makes equal bytes equal texts.
    if len(set(inner)) != len(inner):
        raise _binary_set_duplicates(inner)
    return inner


def _validate_number_set(inner: Any, depth: int) -> list[str]:
    if type(inner) is not list:
        raise _expected_list(inner)
    if not inner:
        raise RequestValidationError(MESSAGE_EMPTY_NUMBER_SET)
    changed: list[str] | None = None
    for index, member in enumerate(inner):
        if type(member) is not str:
            if member is None:
                raise ValidationException(MESSAGE_NOT_NUMERIC)
            raise _not_a("String", member)
        normalized = normalize_number(member)
        if normalized != member:
            if changed is None:
                changed = list(inner)
            changed[index] = normalized
    result = inner if changed is None else changed
    # Normal forms are unique, so numeric duplicates are equal strings.
    if len(set(result)) != len(result):
        raise RequestValidationError(MESSAGE_NUMBER_SET_DUPLICATES)
    return result


_VALIDATORS: dict[str, Callable[[Any, int], Any]] = {
    "S": _validate_string,
    "N": _validate_number,
    "B": _validate_binary,
    "BOOL": _validate_bool,
    "NULL": _validate_null,
    "M": _validate_map,
    "L": _validate_list,
    "SS": _validate_string_set,
    "NS": _validate_number_set,
    "BS": _validate_binary_set,
}


# --- JSON shape (the deserializer's view) ----------------------------------------


def check_item_shape(item: Any) -> None:
    """Raise the SerializationException the service's deserializer would raise
    for ``item``, if any.

    The service deserializes the whole request before it validates anything,
    so a JSON value of the wrong kind anywhere wins over a rule broken earlier
    in the item. Validation checks kinds as it goes (the fast path); when it
    is about to report a ValidationException it calls this first. Operations
    can call it on other request members for the same ordering.
    """
    if type(item) is not dict:
        raise _expected_map(item)
    for value in item.values():
        check_attribute_value_shape(value)


def check_attribute_value_shape(value: Any, depth: int = 0) -> None:
    """Like check_item_shape, for one attribute value.

    It looks no deeper than the nesting limit: below that the value is
    rejected as too deep anyway, and the walk stays bounded however deep a
    hostile document goes.
    """
    if value is None or depth > _NESTING_MAX_DEPTH:
        return
    if type(value) is not dict:
        raise _expected_structure(value)
    for type_key, inner in value.items():
        if inner is None:
            continue
        if type_key in ("S", "N", "SS", "NS"):
            _check_strings_shape(inner, type_key in ("SS", "NS"))
        elif type_key in ("B", "BS"):
            _check_binaries_shape(inner, type_key == "BS")
        elif type_key in _BOOLEAN_TYPES:
            _check_boolean(inner)
        elif type_key == "L":
            if type(inner) is not list:
                raise _expected_list(inner)
            for child in inner:
                check_attribute_value_shape(child, depth + 1)
        elif type_key == "M":
            if type(inner) is not dict:
                raise _expected_map(inner)
            for child in inner.values():
                check_attribute_value_shape(child, depth + 1)


def _check_strings_shape(inner: Any, is_set: bool) -> None:
    members = _list_members(inner) if is_set else (inner,)
    for member in members:
        if member is not None and type(member) is not str:
            raise _not_a("String", member)


def _check_binaries_shape(inner: Any, is_set: bool) -> None:
    members = _list_members(inner) if is_set else (inner,)
    for member in members:
        if member is None:
            continue
        if type(member) is not str:
            raise _not_a("Blob", member)
        decode_base64(member)


def _list_members(inner: Any) -> list[Any]:
    if type(inner) is not list:
        raise _expected_list(inner)
    return inner


# --- inspection, equality, order ------------------------------------------------


def type_of(value: dict[str, Any]) -> str:
    """The type key of a validated attribute value ("S", "N", "M", ...)."""
    for type_key in value:
        return type_key
    raise ValidationException(MESSAGE_EMPTY)


def values_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """DynamoDB equality: same type and same value; sets ignore order, numbers
    compare numerically, binaries by their bytes, maps and lists deeply."""
    if a is b:
        return True
    type_a, type_b = type_of(a), type_of(b)
    if type_a != type_b:
        return False
    left, right = a[type_a], b[type_b]
    if left == right:  # identical JSON is always equal; the converse needs a look
        return True
    return _EQUALITY[type_a](left, right)


def _never_equal(left: Any, right: Any) -> bool:
    return False  # S, BOOL, NULL: equal only when ``==`` already said so


def _numbers_equal(left: str, right: str) -> bool:
    return compare_numbers(left, right) == 0


def _binaries_equal(left: str, right: str) -> bool:
    return binascii.a2b_base64(left) == binascii.a2b_base64(right)


def _string_sets_equal(left: list[str], right: list[str]) -> bool:
    return set(left) == set(right)


def _number_sets_equal(left: list[str], right: list[str]) -> bool:
    return {Decimal(member) for member in left} == {Decimal(member) for member in right}


def _binary_sets_equal(left: list[str], right: list[str]) -> bool:
    return {binascii.a2b_base64(m) for m in left} == {binascii.a2b_base64(m) for m in right}


def _maps_equal(left: dict[str, Any], right: dict[str, Any]) -> bool:
    if left.keys() != right.keys():
        return False
    return all(values_equal(child, right[name]) for name, child in left.items())


def _lists_equal(left: list[Any], right: list[Any]) -> bool:
    if len(left) != len(right):
        return False
    return all(values_equal(x, y) for x, y in zip(left, right, strict=True))


_EQUALITY: dict[str, Callable[[Any, Any], bool]] = {
    "S": _never_equal,
    "N": _numbers_equal,
    "B": _binaries_equal,
    "BOOL": _never_equal,
    "NULL": _never_equal,
    "SS": _string_sets_equal,
    "NS": _number_sets_equal,
    "BS": _binary_sets_equal,
    "M": _maps_equal,
    "L": _lists_equal,
}


def compare_values(a: dict[str, Any], b: dict[str, Any]) -> int | None:
    """-1, 0 or 1 for two values of the same scalar type S, N or B; None when
    DynamoDB cannot order them (different types, or any other type).

    S orders by UTF-8 bytes. Python compares str by code point, and UTF-8
    preserves code point order, so plain ``<`` is exactly that order (unlike
    UTF-16 languages, where characters above U+FFFF sort wrongly). B orders by
    unsigned bytes, N numerically.
    """
    type_a, type_b = type_of(a), type_of(b)
    if type_a != type_b:
        return None
    left, right = a[type_a], b[type_b]
    if type_a == "S":
        return 0 if left == right else (-1 if left < right else 1)
    if type_a == "N":
        return compare_numbers(left, right)
    if type_a == "B":
        if left == right:
            return 0
        left_bytes, right_bytes = binascii.a2b_base64(left), binascii.a2b_base64(right)
        return 0 if left_bytes == right_bytes else (-1 if left_bytes < right_bytes else 1)
    return None

"""Request-shape validation derived from DynamoDB's service model.

``validate_request(operation, request)`` runs before every handler and gives
DynamoDB's structural errors, in DynamoDB's order:

1. JSON types, in document order -> ``SerializationException`` with the
   service's (Java/Coral) texts: "NUMBER_VALUE cannot be converted to String",
   "Unexpected field type", "Start of structure or map found where not
   expected", ... The text depends on where a value sits: a structure member
   (a "field") or a list element / map value (an "element").
2. Hand-written table-name checks some control-plane operations do first
   ("TableName must be at least 3 characters long and at most 255 characters
   long").
3. Constraints (required, length, pattern, enum, range) -> one
   ``ValidationException``: "N validation error(s) detected: Value '...' at
   'path' failed to satisfy constraint: ...; ...", at most 10 listed.

The model is ``service_model.json``, generated from botocore by
tools/generate_shapes.py (which also records where the service differs from
the model). At import time every shape is compiled into small closures, so a
request costs a handful of dict and type checks; the slow, message-building
walk (``_ConstraintReport``) only runs when a constraint failed.

Side effect, as in DynamoDB's deserialiser: a few lenient conversions are
applied in place so handlers can trust types - "true"/"1"/"yes" (any case) for
a boolean become ``True`` ("false"/"0"/"no" become ``False``) and a float
given for an integer member is truncated to ``int``.

Unknown members are ignored, as DynamoDB does; ``null`` counts as absent.
Semantic checks of attribute values (number format, empty or duplicate sets,
exactly one type) are not done here but in dynastore.types.attribute_value.
"""

from __future__ import annotations

import binascii
import json
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynastore import limits
from dynastore.errors import SerializationException, ValidationException
from dynastore.limits import TABLE_NAME_MAX_LENGTH, TABLE_NAME_MIN_LENGTH, TABLE_NAME_PATTERN
from dynastore.types.attribute_value import MESSAGE_NESTING

Checker = Callable[[Any], bool]
"""Phase 1: raises SerializationException on a type error (after converting
lenient values, see ``_Converted``); returns False when a constraint fails."""

MODEL_PATH = Path(__file__).with_name("service_model.json")
MAX_REPORTED_ERRORS = limits.VALIDATION_ERRORS_MAX_LISTED
"""DynamoDB (and dynalite after it) lists at most this many constraint errors.
(Belongs in dynastore.limits as VALIDATION_ERRORS_MAX_LISTED.)"""

RENDERED_VALUE_MAX_CHARS = 65_536
"""How much of a value a constraint message shows. DynamoDB shows all of it;
past this a message of ten errors could echo a 16 MB request ten times (a
reply of 160 MB, past what the HTTP front's link carries). The strings the
model bounds are bounded far below this; what gets cut is a pathological
string, or the rendering of a whole map or list of large items (a batch
over its length limit), which shows its first 65,536 characters."""

JAVA_PACKAGE = "com.amazonaws.dynamodb.v20120810."
TABLE_ARN_PREFIX = "arn:"
ACCEPTED_NAMES_CACHE_ENTRIES = limits.TABLE_NAME_CACHE_ENTRIES
"""Bound of each cache of table names already found valid."""

# --- SerializationException texts ---------------------------------------------------

START_OF_STRUCTURE = "Start of structure or map found where not expected"
UNEXPECTED_FIELD_TYPE = "Unexpected field type"
UNEXPECTED_VALUE_TYPE = "Unexpected value type in payload"
UNEXPECTED_TOKEN = "Unexpected token received from parser"
NOT_BASE64_STRING = "only base-64-encoded strings are convertible to bytes"
INVALID_BASE64_LAST_CHARACTER = "Invalid last non-pad Base64 character dectected"  # sic
PARAMETERIZED_CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl "
    "and java.lang.Class are in module java.base of loader 'bootstrap')"
)
TRUE_WORDS = frozenset({"TRUE", "1", "YES"})
FALSE_WORDS = frozenset({"FALSE", "0", "NO"})

#: Java class of each scalar model type, as DynamoDB names it in messages.
JAVA_SCALARS = {
    "string": "String",
    "boolean": "Boolean",
    "integer": "Integer",
    "long": "Long",
    "double": "Double",
    "timestamp": "Date",
}
JAVA_CLASS_NAMES = {
    "String": "java.lang.String",
    "Boolean": "java.lang.Boolean",
    "Integer": "java.lang.Integer",
    "Long": "java.lang.Long",
    "Double": "java.lang.Double",
    "Date": "java.util.Date",
}

FIELD = "field"
ELEMENT = "element"


class _Converted(Exception):  # noqa: N818 - a signal, not an error
    """A lenient scalar was converted; the container stores ``value`` and re-checks."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _token_name(value: Any) -> str:
    """The JSON token DynamoDB's parser names for a scalar value."""
    if value is True:
        return "TRUE_VALUE"
    if value is False:
        return "FALSE_VALUE"
    if type(value) is int:
        return "NUMBER_VALUE"
    if type(value) is float:
        return "DECIMAL_VALUE"
    return "STRING_VALUE"


def _scalar_type_error(value: Any, java_name: str) -> SerializationException:
    if type(value) is list:
        return SerializationException(
            f"Unrecognized collection type class {JAVA_CLASS_NAMES[java_name]}"
        )
    if type(value) is dict:
        return SerializationException(START_OF_STRUCTURE)
    if java_name == "Boolean" and type(value) is str:
        return SerializationException(UNEXPECTED_TOKEN)
    return SerializationException(f"{_token_name(value)} cannot be converted to {java_name}")


def java_length(text: str) -> int:
    """String length as Java counts it (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _base64_error(text: str) -> str | None:
    """DynamoDB's complaint about a blob's base64 text, or None when valid."""
    if len(text) % 4:
        return f"Base64 encoded length is expected a multiple of 4 bytes but found: {len(text)}"
    try:
        raw = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        return INVALID_BASE64_LAST_CHARACTER
    # Non-canonical text (non-zero bits after the last character) is refused too.
    if binascii.b2a_base64(raw, newline=False).decode("ascii") != text:
        return INVALID_BASE64_LAST_CHARACTER
    return None


# --- Constraints of one shape ----------------------------------------------------------


class _Constraints:
    """The constraint part of a string, number, list or map shape."""

    def __init__(self, shape: dict[str, Any]) -> None:
        self.kind: str = shape["type"]
        self.minimum: int | None = shape.get("min")
        self.maximum: int | None = shape.get("max")
        self.pattern_text: str | None = shape.get("pattern")
        regex = shape.get("regex", self.pattern_text)  # Python spelling of a Java pattern
        # Java's \w, \d and \s are ASCII-only.
        self.pattern = re.compile(regex, re.ASCII) if regex else None
        self.enum: list[str] | None = shape.get("enum")
        self.enum_set = frozenset(self.enum) if self.enum else None
        self.table_name: str | None = shape.get("table_name")
        if self.table_name:
            self.pattern_text = TABLE_NAME_PATTERN
            self.pattern = re.compile(TABLE_NAME_PATTERN, re.ASCII)

    @property
    def empty(self) -> bool:
        return (
            self.minimum is None and self.maximum is None and self.pattern is None
            and self.enum_set is None and not self.table_name
        )

    def violations(self, value: Any) -> list[str]:
        """Every failed constraint of a present value, in DynamoDB's order."""
        if self.table_name:
            return self._table_name_violations(value)
        if self.kind == "string":
            return self._string_violations(value, self.minimum, self.maximum, self.pattern)
        if self.kind in ("list", "map"):
            return _length_violations(len(value), self.minimum, self.maximum)
        found = []
        if self.minimum is not None and value < self.minimum:
            found.append(f"Member must have value greater than or equal to {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            found.append(f"Member must have value less than or equal to {self.maximum}")
        return found

    def _string_violations(
        self, value: str, minimum: int | None, maximum: int | None, pattern: re.Pattern[str] | None
    ) -> list[str]:
        found = []
        if pattern is not None and pattern.fullmatch(value) is None:
            found.append(f"Member must satisfy regular expression pattern: {self.pattern_text}")
        found += _length_violations(java_length(value), minimum, maximum)
        if self.enum_set is not None and value not in self.enum_set:
            found.append(f"Member must satisfy enum value set: [{', '.join(self.enum or [])}]")
        return found

    def _table_name_violations(self, value: str) -> list[str]:
        """A table name, or a table ARN (checked against the model's bounds)."""
        if value.startswith(TABLE_ARN_PREFIX):
            return _length_violations(java_length(value), self.minimum, self.maximum)
        if self.table_name == "data":
            if value == "":
                return _length_violations(0, self.minimum, None)
            return self._string_violations(value, None, TABLE_NAME_MAX_LENGTH, self.pattern)
        return self._string_violations(
            value, TABLE_NAME_MIN_LENGTH, TABLE_NAME_MAX_LENGTH, self.pattern
        )

    def all_texts(self) -> list[str]:
        """All constraints, as listed in "Map keys must satisfy constraint: [...]"."""
        maximum, minimum = self.maximum, self.minimum
        if self.table_name:
            maximum, minimum = TABLE_NAME_MAX_LENGTH, TABLE_NAME_MIN_LENGTH
        texts = []
        if maximum is not None:
            texts.append(f"Member must have length less than or equal to {maximum}")
        if minimum is not None:
            texts.append(f"Member must have length greater than or equal to {minimum}")
        if self.pattern is not None:
            texts.append(f"Member must satisfy regular expression pattern: {self.pattern_text}")
        if self.enum:
            texts.append(f"Member must satisfy enum value set: [{', '.join(self.enum)}]")
        return texts

    def predicate(self) -> Callable[[Any], bool] | None:
        """A fast yes/no version of ``violations`` (None when nothing to check)."""
        if self.empty:
            return None
        if self.kind == "string" and not self.table_name:
            return self._string_predicate()
        if self.table_name:
            return self._table_name_predicate()
        low = -sys.maxsize if self.minimum is None else self.minimum
        high = sys.maxsize if self.maximum is None else self.maximum
        if self.kind in ("list", "map"):
            return lambda value: low <= len(value) <= high
        return lambda value: low <= value <= high

    def _table_name_predicate(self) -> Callable[[Any], bool]:
        """Table names repeat from request to request: remember the good ones."""
        accepted: dict[str, bool] = {}

        def check(value: str) -> bool:
            if value in accepted:
                return True
            if self._table_name_violations(value):
                return False
            if len(accepted) >= ACCEPTED_NAMES_CACHE_ENTRIES:
                accepted.clear()
            accepted[value] = True
            return True

        return check

    def length_only_maximum(self) -> int | None:
        """The maximum when it is a string's only constraint (attribute names)."""
        if self.kind == "string" and self.maximum is not None and self.minimum is None:
            if self.pattern is None and self.enum_set is None and not self.table_name:
                return self.maximum
        return None

    def _string_predicate(self) -> Callable[[Any], bool]:
        enum_set, pattern = self.enum_set, self.pattern
        if enum_set is not None and pattern is None and self.minimum is None and self.maximum is None:
            return enum_set.__contains__
        low = -1 if self.minimum is None else self.minimum
        high = float("inf") if self.maximum is None else self.maximum

        def check(value: str) -> bool:
            if not low <= (len(value) if value.isascii() else java_length(value)) <= high:
                return False
            if pattern is not None and pattern.fullmatch(value) is None:
                return False
            return enum_set is None or value in enum_set

        return check


def _length_violations(length: int, minimum: int | None, maximum: int | None) -> list[str]:
    found = []
    if minimum is not None and length < minimum:
        found.append(f"Member must have length greater than or equal to {minimum}")
    if maximum is not None and length > maximum:
        found.append(f"Member must have length less than or equal to {maximum}")
    return found


# --- Phase 1: compiled type and constraint checks ------------------------------------


ATTRIBUTE_VALUE_SHAPE = "AttributeValue"


DOCUMENT_CHECK_MAX_DEPTH = 2 * limits.NESTING_MAX_DEPTH
"""How deep the request checks follow a document (AttributeValue's M and L,
the model's only recursive shape) before refusing it as nested too deep:
past DynamoDB's 32 levels, far short of Python's recursion limit (each level
costs the checks three frames)."""
_document_depth = threading.local()


def _depth_bounded(check: Checker) -> Checker:
    """``check`` (AttributeValue's), counting how deep documents nest. Plain
    values ({"S": ...}) never get here: their containers accept them inline."""

    def check_bounded(value: Any) -> bool:
        if type(value) is dict and "M" not in value and "L" not in value:
            return check(value)  # a set or a scalar: nothing nests below it
        depth = getattr(_document_depth, "value", 0)
        if depth >= DOCUMENT_CHECK_MAX_DEPTH:
            raise ValidationException(MESSAGE_NESTING)
        _document_depth.value = depth + 1
        try:
            return check(value)
        finally:
            _document_depth.value = depth

    return check_bounded


def _null_refused(shapes: dict[str, Any], value_shape: str) -> bool:
    """A map value of this shape may not be a JSON null: a structure or a
    list (BatchGetItem's KeysAndAttributes, BatchWriteItem's write requests),
    not a document's AttributeValue."""
    return value_shape != ATTRIBUTE_VALUE_SHAPE and shapes[value_shape]["type"] in ("structure", "list")


def lower_first(name: str) -> str:
    """Member name as DynamoDB writes it in a constraint path ("sSESpecification")."""
    return name[:1].lower() + name[1:]


class _Compiler:
    """Turns model shapes into ``Checker`` closures, one per (shape, position)."""

    def __init__(self, shapes: dict[str, Any]) -> None:
        self.shapes = shapes
        self.cache: dict[tuple[str, str], Checker] = {}
        self.constraint_cache: dict[str, _Constraints] = {}

    def constraints(self, name: str) -> _Constraints:
        found = self.constraint_cache.get(name)
        if found is None:
            found = self.constraint_cache[name] = _Constraints(self.shapes[name])
        return found

    def checker(self, name: str, position: str) -> Checker:
        key = (name, position)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        late: list[Checker] = []  # recursive shapes (AttributeValue) see this until built
        self.cache[key] = lambda value: late[0](value)
        built = self._build(name, position)
        late.append(built)
        self.cache[key] = built
        return built

    def _build(self, name: str, position: str) -> Checker:
        kind = self.shapes[name]["type"]
        if kind == "structure":
            return self._structure(name, position)
        if kind == "list":
            return self._list(name, position)
        if kind == "map":
            return self._map(name, position)
        if kind == "blob":
            return _check_blob
        if kind == "boolean":
            return _check_boolean
        return _scalar_checker(kind, self.constraints(name).predicate())

    def valid_by_type(self, name: str) -> type | None:
        """The Python type that alone makes a value of this shape valid, if any."""
        kind = self.shapes[name]["type"]
        if kind == "boolean":
            return bool
        if kind == "string" and self.constraints(name).empty:
            return str
        if kind in ("integer", "long", "double") and self.constraints(name).empty:
            return int
        return None

    def java_type(self, name: str) -> str:
        shape = self.shapes[name]
        kind = shape["type"]
        if kind == "structure":
            return JAVA_PACKAGE + name
        if kind == "list":
            return f"java.util.List<{self.java_type(shape['member'])}>"
        if kind == "map":
            return f"java.util.Map<java.lang.String, {self.java_type(shape['value'])}>"
        if kind == "blob":
            return "java.nio.ByteBuffer"
        return JAVA_CLASS_NAMES[JAVA_SCALARS[kind]]

    def _structure(self, name: str, position: str) -> Checker:
        shape = self.shapes[name]
        members = {member: self.checker(target, FIELD) for member, target in shape["members"].items()}
        accepted_as_is = {
            member: plain
            for member, target in shape["members"].items()
            if (plain := self.valid_by_type(target)) is not None
        }
        required = tuple(shape["required"])
        collection_error = f"Unrecognized collection type class {JAVA_PACKAGE}{name}"
        scalar_error = UNEXPECTED_FIELD_TYPE if position == FIELD else UNEXPECTED_VALUE_TYPE

        def check_structure(value: Any) -> bool:
            if type(value) is not dict:
                raise SerializationException(
                    collection_error if type(value) is list else scalar_error
                )
            ok = True
            for member, item in value.items():
                if type(item) is accepted_as_is.get(member):
                    continue
                checker = members.get(member)
                if checker is None or item is None:
                    continue
                try:
                    if not checker(item):
                        ok = False
                except _Converted as converted:
                    value[member] = converted.value
                    ok = checker(converted.value) and ok
            for member in required:
                if value.get(member) is None:
                    ok = False
            return ok

        if name == ATTRIBUTE_VALUE_SHAPE:
            return _depth_bounded(check_structure)
        return check_structure

    def inline_members(self, name: str) -> dict[str, type] | None:
        """For a structure without required members (AttributeValue): the
        members a container may accept by Python type alone, without calling
        the structure's checker - the hot path of item maps."""
        shape = self.shapes[name]
        if shape["type"] != "structure" or shape["required"]:
            return None
        return {
            member: plain
            for member, target in shape["members"].items()
            if (plain := self.valid_by_type(target)) is not None
        }

    def _list(self, name: str, position: str) -> Checker:
        shape = self.shapes[name]
        element = self.checker(shape["member"], ELEMENT)
        # A JSON null in a list is a member that must not be null, except in
        # a document's L (the item validation words that one).
        nulls_allowed = shape["member"] == ATTRIBUTE_VALUE_SHAPE
        plain = self.valid_by_type(shape["member"])
        fast_members = self.inline_members(shape["member"])
        length_ok = self.constraints(name).predicate()
        scalar_error = UNEXPECTED_FIELD_TYPE if position == FIELD else PARAMETERIZED_CAST

        def check_list(value: Any) -> bool:
            if type(value) is not list:
                raise SerializationException(
                    START_OF_STRUCTURE if type(value) is dict else scalar_error
                )
            ok = True
            for index, item in enumerate(value):
                if type(item) is plain:
                    continue
                if fast_members is not None and type(item) is dict:
                    for member, inner in item.items():
                        if type(inner) is not fast_members.get(member):
                            break
                    else:
                        continue
                if item is None:
                    ok = ok and nulls_allowed  # "Member must not be null" (_ConstraintReport)
                    continue
                try:
                    if not element(item):
                        ok = False
                except _Converted as converted:
                    value[index] = converted.value
                    ok = element(converted.value) and ok
            return ok and (length_ok is None or length_ok(value))

        return check_list

    def _map(self, name: str, position: str) -> Checker:
        shape = self.shapes[name]
        element = self.checker(shape["value"], ELEMENT)
        fast_members = self.inline_members(shape["value"])
        length_ok = self.constraints(name).predicate()
        key_constraints = self.constraints(shape["key"])
        key_maximum = key_constraints.length_only_maximum()
        key_ok = None if key_maximum is not None else key_constraints.predicate()
        # A key can exceed the maximum in UTF-16 units only if it has more than
        # half as many code points: only such keys need counting.
        key_limit = sys.maxsize if key_maximum is None else key_maximum
        long_key = key_limit // 2
        collection_error = f"Unrecognized collection type {self.java_type(name)}"
        scalar_error = UNEXPECTED_FIELD_TYPE if position == FIELD else PARAMETERIZED_CAST
        # A JSON null as a structure value (BatchGetItem's RequestItems) is a
        # member that must not be null; as a name or a document value the
        # operations word the error themselves.
        nulls_allowed = not _null_refused(self.shapes, shape["value"])

        def check_map(value: Any) -> bool:
            if type(value) is not dict:
                raise SerializationException(
                    collection_error if type(value) is list else scalar_error
                )
            ok = True
            for key, item in value.items():
                if len(key) > long_key and java_length(key) > key_limit:
                    ok = False
                if fast_members is not None and type(item) is dict:
                    for member, inner in item.items():
                        if type(inner) is not fast_members.get(member):
                            break
                    else:
                        continue
                if item is None:
                    ok = ok and nulls_allowed  # "Member must not be null" (_ConstraintReport)
                    continue
                try:
                    if not element(item):
                        ok = False
                except _Converted as converted:
                    value[key] = converted.value
                    ok = element(converted.value) and ok
            if key_ok is not None and not all(map(key_ok, value)):
                ok = False
            return ok and (length_ok is None or length_ok(value))

        return check_map


def _scalar_checker(kind: str, constraint: Callable[[Any], bool] | None) -> Checker:
    java_name = JAVA_SCALARS[kind]
    if kind == "string":
        if constraint is None:

            def check_plain_string(value: Any) -> bool:
                if type(value) is str:
                    return True
                raise _scalar_type_error(value, java_name)

            return check_plain_string

        def check_string(value: Any) -> bool:
            if type(value) is str:
                return constraint(value)
            raise _scalar_type_error(value, java_name)

        return check_string
    accepted: tuple[type, ...] = {
        "integer": (int,), "long": (int,), "double": (int, float), "timestamp": (int, float, str),
    }[kind]
    truncates = kind in ("integer", "long")

    def check_number(value: Any) -> bool:
        value_type = type(value)
        if value_type in accepted:
            return constraint is None or value_type is str or constraint(value)
        if truncates and value_type is float:
            raise _Converted(int(value))
        raise _scalar_type_error(value, java_name)

    return check_number


def _check_boolean(value: Any) -> bool:
    if value is True or value is False:
        return True
    if type(value) is str:
        word = value.upper()
        if word in TRUE_WORDS:
            raise _Converted(True)
        if word in FALSE_WORDS:
            raise _Converted(False)
    raise _scalar_type_error(value, "Boolean")


def _check_blob(value: Any) -> bool:
    if type(value) is str:
        problem = _base64_error(value)
        if problem is not None:
            raise SerializationException(problem)
        return True
    if type(value) is list:
        raise SerializationException("Unrecognized collection type class java.nio.ByteBuffer")
    if type(value) is dict:
        raise SerializationException(START_OF_STRUCTURE)
    raise SerializationException(NOT_BASE64_STRING)


# --- Phase 3: the ordered constraint report (slow path) --------------------------------


class _ConstraintReport:
    """Walks a request that failed a constraint and lists DynamoDB's messages."""

    def __init__(self, compiler: _Compiler) -> None:
        self.compiler = compiler
        self.shapes = compiler.shapes
        self.errors: list[str] = []

    def add(self, value: Any, shape: str, path: str, text: str) -> None:
        if len(self.errors) >= MAX_REPORTED_ERRORS:
            return  # not listed: rendering it would only cost time (a map's value for each bad key)
        rendered = "null" if value is None else f"'{self.render(value, shape)[:RENDERED_VALUE_MAX_CHARS]}'"
        self.errors.append(f"Value {rendered} at '{path}' failed to satisfy constraint: {text}")

    def structure(self, name: str, value: dict[str, Any], path: str) -> None:
        shape = self.shapes[name]
        required = shape["required"]
        for member in shape["order"]:
            member_path = f"{path}.{lower_first(member)}" if path else lower_first(member)
            item = value.get(member)
            target = shape["members"][member]
            if item is None:
                if member in required:
                    self.add(None, target, member_path, "Member must not be null")
                continue
            self.value(target, item, member_path, own=True)

    def value(self, name: str, item: Any, path: str, own: bool) -> None:
        constraints = self.compiler.constraints(name)
        if own and not constraints.empty:
            for text in constraints.violations(item):
                self.add(item, name, path, text)
        shape = self.shapes[name]
        kind = shape["type"]
        if kind == "structure":
            self.structure(name, item, path)
        elif kind == "list":
            for index, element in enumerate(item, 1):
                if element is not None:
                    self.value(shape["member"], element, f"{path}.{index}.member", own=True)
                elif shape["member"] != ATTRIBUTE_VALUE_SHAPE:
                    self.add(None, shape["member"], f"{path}.{index}.member", "Member must not be null")
        elif kind == "map":
            self.map_entries(name, item, path)

    def map_entries(self, name: str, item: dict[str, Any], path: str) -> None:
        shape = self.shapes[name]
        keys = self.compiler.constraints(shape["key"])
        if not keys.empty:
            listed = ", ".join(keys.all_texts())
            for key in item:
                if keys.violations(key):
                    self.add(item, name, path, f"Map keys must satisfy constraint: [{listed}]")
        values = self.compiler.constraints(shape["value"])
        value_is_bounded = self.shapes[shape["value"]]["type"] in ("list", "map", "string")
        if value_is_bounded and not values.empty:
            listed = ", ".join(values.all_texts())
            for element in item.values():
                if element is not None and values.violations(element):
                    self.add(item, name, path, f"Map value must satisfy constraint: [{listed}]")
        for key, element in item.items():
            if element is not None:
                self.value(shape["value"], element, f"{path}.{key}.member", own=not value_is_bounded)
            elif _null_refused(self.shapes, shape["value"]):
                self.add(None, shape["value"], f"{path}.{key}.member", "Member must not be null")

    def render(self, value: Any, name: str | None) -> str:
        """A value as Java's toString shows it in DynamoDB's messages."""
        value_type = type(value)
        if value is None:
            return "null"
        if value_type is str:
            return str(value)
        if value_type is bool:
            return "true" if value else "false"
        if value_type in (int, float):
            return repr(value)
        shape = self.shapes.get(name or "", {})
        if value_type is list:
            member = shape.get("member")
            return "[" + ", ".join(self.render(element, member) for element in value) + "]"
        if shape.get("type") == "structure":
            # Java's toString lists the fields in declaration (model) order.
            fields = ", ".join(
                f"{lower_first(member)}={self.render(value[member], target)}"
                for member, target in shape["members"].items()
                if value.get(member) is not None
            )
            return f"{(name or '').partition('@')[0]}({fields})"  # a copy's name ("X@restore") is X's
        inner = shape.get("value")
        return "{" + ", ".join(f"{key}={self.render(item, inner)}" for key, item in value.items()) + "}"

    def message(self) -> str | None:
        errors = self.errors
        if not errors:
            return None
        plural = "s" if len(errors) > 1 else ""
        return f"{len(errors)} validation error{plural} detected: " + "; ".join(errors)


# --- Operations ------------------------------------------------------------------------


def _name_prechecks(request: dict[str, Any], prechecks: list[dict[str, Any]]) -> None:
    """The hand-written checks some operations make before the constraint
    validator (table and index names; see tools/generate_shapes.py)."""
    for precheck in prechecks:
        member = precheck["member"]
        name = request.get(member)
        if name is None:
            if precheck["required"]:
                raise ValidationException(
                    f"The parameter '{member}' is required but was not present in the request"
                )
            continue
        if precheck["label"] is None:  # presence only: the constraint report words the rest
            continue
        if not TABLE_NAME_MIN_LENGTH <= java_length(name) <= TABLE_NAME_MAX_LENGTH:
            raise ValidationException(
                f"{precheck['label']} must be at least {TABLE_NAME_MIN_LENGTH} characters long "
                f"and at most {TABLE_NAME_MAX_LENGTH} characters long"
            )


def _operation_validator(compiler: _Compiler, spec: dict[str, Any]) -> Callable[[Any], None]:
    input_shape: str | None = spec.get("input")
    prechecks: list[dict[str, Any]] = spec.get("name_prechecks", [])
    if input_shape is None:
        return lambda request: None
    check = compiler.checker(input_shape, FIELD)

    def validate(request: Any) -> None:
        try:
            if check(request):
                return
            if prechecks:
                _name_prechecks(request, prechecks)
            report = _ConstraintReport(compiler)
            report.structure(input_shape, request, "")
        except RecursionError:
            # Only a safety net: documents are refused before this deep
            # (DOCUMENT_CHECK_MAX_DEPTH), and nothing else in the model recurses.
            raise ValidationException(MESSAGE_NESTING) from None
        message = report.message()
        if message is not None:
            raise ValidationException(message)

    return validate


def _load() -> tuple[_Compiler, dict[str, Callable[[Any], None]]]:
    model = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    compiler = _Compiler(model["shapes"])
    validators = {
        operation: _operation_validator(compiler, spec)
        for operation, spec in model["operations"].items()
    }
    return compiler, validators


_COMPILER, VALIDATORS = _load()


def validate_request(operation: str, request: dict[str, Any]) -> None:
    """Raise DynamoDB's SerializationException or ValidationException for a
    request whose shape the service would refuse; may convert lenient scalars
    in place (see the module docstring). Unknown operations pass."""
    validator = VALIDATORS.get(operation)
    if validator is not None:
        validator(request)

"""Faults on demand: deterministic rules that make requests fail, so that
applications can test their retry and contention code against dynastore.

A rule says "the next N requests (of operation O, touching table T, touching
the item with key K) fail with error E"; every field but the error is
optional. Rules live on the Database (``database.faults``), are listed with
their hit counts, cleared one by one or all at once, and never fire at random
unless the rule has a ``Probability`` below 1 *and* a ``Seed`` (then the
same seed gives the same sequence of hits).

Where rules act (see docs/faults.md):

- ``before(operation, request)``: called by ``ops.dispatch`` after shape
  validation, only when a rule is armed. Throttling-like errors fail the
  request before it runs; ``TransactionConflict`` fails a single-item write
  (PutItem, UpdateItem, DeleteItem, BatchWriteItem) with
  TransactionConflictException, exactly as DynamoDB answers a write to an
  item an ongoing transaction holds.
- ``conflicting_actions(operation, touches)``: TransactWriteItems and
  TransactGetItems ask which of their actions a TransactionConflict rule
  covers; those report Code TransactionConflict and the transaction is
  cancelled.
- ``held_items(operation, items_by_table)``: BatchWriteItem and BatchGetItem
  ask which of their items an ``Unprocessed`` rule holds back; those come back
  in UnprocessedItems / UnprocessedKeys, not applied.

Each matching rule counts one hit per request, whatever number of items of
the request it covers. The module is pure data and matching; ``handle_admin``
is the HTTP admin API as a plain function, for the protocol layer to route.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore import limits
from dynastore.engine.table_arns import table_name_from_identifier
from dynastore.errors import (
    DynamoDBError,
    InternalServerError,
    ProvisionedThroughputExceededException,
    RequestLimitExceeded,
    ThrottlingException,
    TransactionConflictException,
)
from dynastore.types.number import normalize_number

ADMIN_FAULTS_PATH = "/_dynastore/faults"

CONFLICT = "TransactionConflict"
UNPROCESSED = "Unprocessed"
REQUEST_ERRORS: dict[str, type[DynamoDBError]] = {
    "ProvisionedThroughputExceededException": ProvisionedThroughputExceededException,
    "ThrottlingException": ThrottlingException,
    "InternalServerError": InternalServerError,
    "RequestLimitExceeded": RequestLimitExceeded,
}
ERROR_ALIASES = {"TransactionConflictException": CONFLICT}
ERRORS = (CONFLICT, UNPROCESSED, *REQUEST_ERRORS)

SINGLE_ITEM_WRITES = frozenset(("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"))
"""Operations a TransactionConflict rule fails with TransactionConflictException."""
TRANSACTIONS = frozenset(("TransactWriteItems", "TransactGetItems"))
BATCHES = frozenset(("BatchWriteItem", "BatchGetItem"))

RULES_MAX = limits.FAULT_RULES_MAX
"""Bound of the rule registry (belongs in dynastore.limits as FAULT_RULES_MAX)."""

Item = dict[str, Any]
Touch = tuple[str, Item | None]
"""(table name, the item or key a request touches; None for a whole-table request)."""


class FaultRuleError(ValueError):
    """An invalid rule specification (the admin API answers 400)."""


@dataclass(slots=True)
class FaultRule:
    id: int
    error: str
    operation: str | None = None
    table: str | None = None
    key: Item | None = None
    count: int | None = None
    """How many more requests it fails; None: until cleared."""
    probability: float = 1.0
    seed: int | None = None
    message: str | None = None
    hits: int = 0
    _random: random.Random | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.count is None or self.count > 0

    def covers(self, operation: str, touches: Iterable[Touch]) -> list[int]:
        """Indexes of the touches this rule matches (empty: not this request)."""
        if self.operation is not None and self.operation != operation:
            return []
        matched = []
        for index, (table, item) in enumerate(touches):
            if self.table is not None and self.table != table:
                continue
            if self.key is not None and (item is None or not _has_key(item, self.key)):
                continue
            matched.append(index)
        return matched

    def fire(self) -> bool:
        """Count a hit (when the seeded draw says so); False: not this time."""
        if self._random is not None and self._random.random() >= self.probability:
            return False
        self.hits += 1
        if self.count is not None:
            self.count -= 1
        return True

    def describe(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"Id": self.id, "Error": self.error, "Hits": self.hits}
        for name, value in (
            ("Operation", self.operation),
            ("TableName", self.table),
            ("Key", self.key),
            ("Remaining", self.count),
            ("Seed", self.seed),
            ("Message", self.message),
        ):
            if value is not None:
                spec[name] = value
        if self.probability != 1.0:
            spec["Probability"] = self.probability
        spec["Active"] = self.active
        return spec

    def to_error(self) -> DynamoDBError:
        if self.error == CONFLICT:
            return TransactionConflictException(self.message)
        return REQUEST_ERRORS[self.error](self.message)


def _has_key(item: Item, key: Item) -> bool:
    for name, value in key.items():
        actual = item.get(name)
        if actual is None or _normal(actual) != _normal(value):
            return False
    return True


def _normal(value: Any) -> Any:
    if isinstance(value, dict) and "N" in value and isinstance(value["N"], str):
        try:
            return {"N": normalize_number(value["N"])}
        except Exception:
            return value
    return value


class FaultRules:
    """The registry. ``armed`` is the one attribute the hot path reads: it is
    False whenever no rule can fire, so an unarmed server pays nothing else."""

    def __init__(self) -> None:
        self.armed = False
        self._rules: list[FaultRule] = []
        self._next_id = 1
        self._lock = threading.Lock()

    # --- registry ----------------------------------------------------------------
    def add(
        self,
        error: str,
        *,
        operation: str | None = None,
        table: str | None = None,
        key: Item | None = None,
        count: int | None = 1,
        probability: float = 1.0,
        seed: int | None = None,
        message: str | None = None,
    ) -> FaultRule:
        """Arm a rule; ``count=None`` keeps it armed until cleared."""
        if not isinstance(error, str):
            raise FaultRuleError(f"Error must be one of {', '.join(ERRORS)}")
        error = ERROR_ALIASES.get(error, error)
        _check_rule(error, operation, table, key, count, probability, seed)
        with self._lock:
            if len(self._rules) >= RULES_MAX:
                raise FaultRuleError(f"at most {RULES_MAX} fault rules can be armed")
            rule = FaultRule(self._next_id, error, operation, table, key, count, probability, seed, message)
            if probability < 1.0:
                rule._random = random.Random(seed)
            self._next_id += 1
            self._rules.append(rule)
            self._rearm()
        return rule

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def get(self, rule_id: int) -> FaultRule | None:
        with self._lock:
            return next((rule for rule in self._rules if rule.id == rule_id), None)

    def clear(self, rule_id: int | None = None) -> int:
        """Remove one rule (or all); returns how many were removed."""
        with self._lock:
            before = len(self._rules)
            if rule_id is None:
                self._rules = []
            else:
                self._rules = [rule for rule in self._rules if rule.id != rule_id]
            self._rearm()
            return before - len(self._rules)

    def _rearm(self) -> None:
        self.armed = any(rule.active for rule in self._rules)

    # --- matching -----------------------------------------------------------------------
    def _fire(self, operation: str, touches: list[Touch], kinds: Iterable[str]) -> list[tuple[FaultRule, list[int]]]:
        """The rules of ``kinds`` that fire for this request, with the touches
        each covers; each counts one hit."""
        wanted = frozenset(kinds)
        fired = []
        with self._lock:
            for rule in self._rules:
                if not rule.active or rule.error not in wanted:
                    continue
                covered = rule.covers(operation, touches)
                if covered and rule.fire():
                    fired.append((rule, covered))
            self._rearm()
        return fired

    def before(self, operation: str, request: dict[str, Any]) -> bool:
        """The dispatch-level check: raise the first firing rule's error.
        Returns True (the request may run), so that dispatch can call it in
        one expression: ``faults.armed and faults.before(...)``."""
        kinds = list(REQUEST_ERRORS)
        if operation in SINGLE_ITEM_WRITES:
            kinds.append(CONFLICT)
        fired = self._fire(operation, request_touches(operation, request), kinds)
        if fired:
            raise fired[0][0].to_error()
        return True

    def conflicting_actions(self, operation: str, touches: list[Touch]) -> set[int]:
        """Indexes of a transaction's actions a TransactionConflict rule covers."""
        conflicting: set[int] = set()
        for _, covered in self._fire(operation, touches, (CONFLICT,)):
            conflicting.update(covered)
        return conflicting

    def held_items(self, operation: str, items_by_table: dict[str, list[Item]]) -> dict[str, set[int]]:
        """Per table, the indexes of a batch's items an Unprocessed rule holds back."""
        touches: list[Touch] = []
        owners: list[tuple[str, int]] = []
        for table, items in items_by_table.items():
            for index, item in enumerate(items):
                touches.append((_table_name(table), item))
                owners.append((table, index))
        held: dict[str, set[int]] = {}
        for _, covered in self._fire(operation, touches, (UNPROCESSED,)):
            for position in covered:
                table, index = owners[position]
                held.setdefault(table, set()).add(index)
        return held


def _check_rule(
    error: str,
    operation: str | None,
    table: str | None,
    key: Item | None,
    count: int | None,
    probability: float,
    seed: int | None,
) -> None:
    if error not in ERRORS:
        raise FaultRuleError(f"Error must be one of {', '.join(ERRORS)}")
    if error == UNPROCESSED and operation is not None and operation not in BATCHES:
        raise FaultRuleError("Unprocessed rules apply to BatchWriteItem and BatchGetItem only")
    for name, value in (("Operation", operation), ("TableName", table)):
        if value is not None and not isinstance(value, str):
            raise FaultRuleError(f"{name} must be a string")
    if key is not None and (not isinstance(key, dict) or not key):
        raise FaultRuleError("Key must be a non-empty map of attribute values")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise FaultRuleError("Count must be a positive integer")
    if not isinstance(probability, int | float) or not 0.0 < probability <= 1.0:
        raise FaultRuleError("Probability must be in (0, 1]")
    if probability < 1.0 and seed is None:
        raise FaultRuleError("A Probability below 1 needs a Seed: nothing is random without one")


# --- what a request touches ----------------------------------------------------------------


def request_touches(operation: str, request: dict[str, Any]) -> list[Touch]:
    """Every (table, item or key) a request names; whole-table requests
    (Query, Scan, control plane) touch ``(table, None)``."""
    if operation in ("BatchWriteItem", "BatchGetItem"):
        return _batch_touches(request.get("RequestItems") or {})
    if operation in TRANSACTIONS:
        return transaction_touches(request.get("TransactItems") or [])
    table = request.get("TableName")
    if not isinstance(table, str):
        return [("", None)]
    item = request.get("Item") if operation == "PutItem" else request.get("Key")
    return [(_table_name(table), item if isinstance(item, dict) else None)]


def _table_name(name: str) -> str:
    """Requests may name a table by its ARN; rules name it by its name."""
    return table_name_from_identifier(name) if name.startswith("arn:") else name


def _batch_touches(request_items: dict[str, Any]) -> list[Touch]:
    touches: list[Touch] = []
    for name, entry in request_items.items():
        table = _table_name(name)
        if isinstance(entry, dict):  # BatchGetItem
            touches.extend((table, key) for key in entry.get("Keys") or [])
            continue
        for write in entry or []:
            put = write.get("PutRequest") or {}
            delete = write.get("DeleteRequest") or {}
            touches.append((table, put.get("Item") or delete.get("Key")))
    return touches


def transaction_touches(transact_items: list[Any]) -> list[Touch]:
    """One touch per action, in order (Get, Put, Update, Delete, ConditionCheck)."""
    touches: list[Touch] = []
    for element in transact_items:
        body: dict[str, Any] = {}
        if isinstance(element, dict):
            body = next((value for value in element.values() if isinstance(value, dict)), {})
        table = body.get("TableName")
        touches.append((_table_name(table) if isinstance(table, str) else "", body.get("Item") or body.get("Key")))
    return touches


# --- the admin API (routed by the protocol layer under /_dynastore/) ------------------------


def handle_admin(database: Any, method: str, path: str, body: bytes | dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    """``/_dynastore/faults`` routes, as (HTTP status, JSON body):

    - ``POST /_dynastore/faults`` arms a rule (body: the rule spec) -> 200 {"Rule": ...}
    - ``GET /_dynastore/faults`` lists rules with their hits -> 200 {"Rules": [...]}
    - ``GET /_dynastore/faults/<id>`` one rule -> 200 {"Rule": ...}
    - ``DELETE /_dynastore/faults`` clears all -> 200 {"Cleared": n}
    - ``DELETE /_dynastore/faults/<id>`` clears one -> 200 {"Cleared": 1}
    Anything else is 404 (unknown path) or 405 (unknown method); a bad spec is 400.
    """
    faults: FaultRules = database.faults
    path = path.split("?", 1)[0].rstrip("/")
    if path == ADMIN_FAULTS_PATH:
        if method == "GET":
            return 200, {"Rules": [rule.describe() for rule in faults.rules()]}
        if method == "POST":
            return _admin_add(faults, body)
        if method == "DELETE":
            return 200, {"Cleared": faults.clear()}
        return 405, {"message": "Method Not Allowed"}
    prefix = ADMIN_FAULTS_PATH + "/"
    if not path.startswith(prefix) or not path[len(prefix):].isdigit():
        return 404, {"message": "Not Found"}
    rule_id = int(path[len(prefix):])
    rule = faults.get(rule_id)
    if rule is None:
        return 404, {"message": f"No fault rule {rule_id}"}
    if method == "GET":
        return 200, {"Rule": rule.describe()}
    if method == "DELETE":
        return 200, {"Cleared": faults.clear(rule_id)}
    return 405, {"message": "Method Not Allowed"}


def _admin_add(faults: FaultRules, body: bytes | dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    try:
        spec = orjson.loads(body) if isinstance(body, bytes | bytearray | str) else body
    except orjson.JSONDecodeError:
        return 400, {"message": "The body must be a JSON object"}
    if not isinstance(spec, dict):
        return 400, {"message": "The body must be a JSON object"}
    try:
        rule = add_rule(faults, spec)
    except FaultRuleError as error:
        return 400, {"message": str(error)}
    return 200, {"Rule": rule.describe()}


SPEC_FIELDS = frozenset(
    ("Error", "Operation", "TableName", "Key", "Count", "Probability", "Seed", "Message")
)


def add_rule(faults: FaultRules, spec: dict[str, Any]) -> FaultRule:
    """Arm a rule from its wire spec, e.g. ``{"Error": "ThrottlingException",
    "Operation": "PutItem", "TableName": "t", "Key": {"pk": {"S": "a"}},
    "Count": 2}``; ``"Count": null`` arms it until cleared (default 1)."""
    unknown = set(spec) - SPEC_FIELDS
    if unknown:
        raise FaultRuleError(f"Unknown field(s): {', '.join(sorted(unknown))}")
    if "Error" not in spec:
        raise FaultRuleError("Error is required")
    message = spec.get("Message")
    if message is not None and not isinstance(message, str):
        raise FaultRuleError("Message must be a string")
    seed = spec.get("Seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise FaultRuleError("Seed must be an integer")
    return faults.add(
        spec["Error"],
        operation=spec.get("Operation"),
        table=spec.get("TableName"),
        key=spec.get("Key"),
        count=spec.get("Count", 1),
        probability=spec.get("Probability", 1.0),
        seed=seed,
        message=message,
    )


# --- Unprocessed rules, applied by BatchWriteItem and BatchGetItem ---------------------------


def hold_batch_writes(faults: FaultRules, tables: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """Take the writes an Unprocessed rule holds out of BatchWriteItem's
    validated ``TableWrites`` (``name``, ``writes`` with ``item``/``key``,
    ``keys``), and return them as DynamoDB's UnprocessedItems."""
    held = faults.held_items(
        "BatchWriteItem",
        {table.name: [write.item if write.item is not None else write.key for write in table.writes] for table in tables},
    )
    unprocessed: dict[str, list[dict[str, Any]]] = {}
    for table in tables:
        indexes = held.get(table.name)
        if not indexes:
            continue
        unprocessed[table.name] = [
            {"PutRequest": {"Item": write.item}} if write.item is not None else {"DeleteRequest": {"Key": write.key}}
            for index, write in enumerate(table.writes)
            if index in indexes
        ]
        kept = [index for index in range(len(table.writes)) if index not in indexes]
        table.writes = [table.writes[index] for index in kept]
        table.keys = [table.keys[index] for index in kept]
    return unprocessed


def hold_batch_reads(faults: FaultRules, reads: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """Take the keys an Unprocessed rule holds out of BatchGetItem's
    validated ``TableRead``s (``name``, ``keys``); returns them per table."""
    held = faults.held_items("BatchGetItem", {read.name: list(read.keys) for read in reads})
    taken: dict[str, list[dict[str, Any]]] = {}
    for read in reads:
        indexes = held.get(read.name)
        if not indexes:
            continue
        taken[read.name] = [key for index, key in enumerate(read.keys) if index in indexes]
        read.keys = [key for index, key in enumerate(read.keys) if index not in indexes]
    return taken

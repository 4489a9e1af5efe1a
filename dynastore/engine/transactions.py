"""The pure core of TransactWriteItems and TransactGetItems.

Everything here is decided from the request and the items as they are; no
storage, no clock (``now`` is passed in), no wire I/O:

- parsing one ``TransactItems`` element into an action (its kind, table,
  key/item and compiled plan), with DynamoDB's messages;
- the request-level checks (no item twice, the 4 MB aggregate size);
- running every action's plan against one state (``evaluate``), giving the
  mutations to write or the ``CancellationReasons`` DynamoDB reports;
- ``ClientRequestToken`` records: which request a token was used for, until
  when (10 minutes), and whether a request is a retry of it.

The operations (dynastore/ops/transact_*.py) do the storage part: look the
tables up, read the rows, write the mutations (and the token's record) in
one commit through the write path.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynastore import limits
from dynastore.engine.item_ops import (
    Condition,
    ConditionFailed,
    DeletePlan,
    Item,
    Mutation,
    Plan,
    PutPlan,
    UpdatePlan,
    apply,
    check_item_key,
    check_item_size,
    check_key,
    refuse_key_updates,
    update_size_overhead,
)
from dynastore.engine.schema import TableSchema
from dynastore.errors import (
    IdempotentParameterMismatchException,
    TransactionCanceledException,
    ValidationException,
)
from dynastore.expressions import ExpressionContext, compile_condition, compile_update
from dynastore.expressions import cache as parse_cache
from dynastore.types.attribute_value import MESSAGE_NESTING, validate_item
from dynastore.types.size import item_size

# --- messages (DynamoDB's own) ---------------------------------------------------------

MESSAGE_ONE_ACTION = "TransactItems can only contain one of Check, Put, Update or Delete"
MESSAGE_NO_ACTION = (
    "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
)
MESSAGE_SAME_ITEM = "Transaction request cannot include multiple operations on one item"
MESSAGE_TOO_LARGE = (
    "Collection size of items exceeded, which can also be caused by the aggregate size "
    "of the items in the transaction exceeding the 4MB limit"
)
MESSAGE_CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons"
MESSAGE_CONDITION_FAILED = "The conditional request failed"
MESSAGE_CONFLICT = "Transaction is ongoing for the item"
EMPTY_KEY_VALUE = "The AttributeValue for a key attribute cannot contain an empty"
MESSAGE_TOKEN_MISMATCH = (
    "The request uses the same client token as a previous, but non-identical request."
)

TOKEN_WINDOW_SECONDS = limits.TRANSACTION_TOKEN_WINDOW_SECONDS
"""A ClientRequestToken is remembered for 10 minutes after its request completed.
(Belongs in dynastore.limits as TRANSACTION_TOKEN_WINDOW_SECONDS.)"""

WRITE_KINDS = ("ConditionCheck", "Put", "Update", "Delete")
CAPACITY_FACTOR = limits.TRANSACTION_CAPACITY_FACTOR
"""Transactional reads and writes cost twice their plain counterparts."""


# --- actions --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckPlan:
    """A ConditionCheck: a condition on an item, nothing written."""

    key: Item
    condition: Condition


@dataclass(slots=True)
class WriteAction:
    """One element of TransactItems, parsed (``schema``/``storage_key`` are
    filled in once its table is known, by ``bind``)."""

    index: int
    kind: str  # "Put" | "Update" | "Delete" | "ConditionCheck"
    table_name: str
    key_source: Item  # the item (Put) or the key
    plan: Plan | CheckPlan
    return_old_on_failure: bool
    request_bytes: int  # this action's share of the 4 MB limit
    schema: TableSchema | None = None
    storage_key: tuple[bytes, bytes] = (b"", b"")


def parse_write_action(index: int, element: Any) -> WriteAction:
    """One TransactItems element: exactly one action, its values and
    expressions validated (every placeholder of an expression used), the
    400 KB item limit."""
    kind = _kind_of(element)
    body: dict[str, Any] = element[kind]
    context = ExpressionContext(
        body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues")
    )
    condition = _condition(body, context) if "ConditionExpression" in body else None
    return_old = body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
    table_name = body.get("TableName")
    if kind == "Put":
        item = validate_item(body.get("Item") or {})
        size_bytes = check_item_size(item)
        if condition is not None:
            context.check_all_used()
        plan: Plan | CheckPlan = PutPlan(item, size_bytes, condition)
        return WriteAction(index, kind, table_name, item, plan, return_old, size_bytes)  # type: ignore[arg-type]
    key = validate_item(body.get("Key") or {})
    request_bytes = item_size(key)
    if kind == "Update":
        update = compile_update(body.get("UpdateExpression") or "", context)
        actions = parse_cache.update(update.text).actions
        overhead = update_size_overhead(action.keyword for action in actions)
        plan = UpdatePlan(key, update, condition, overhead)
        request_bytes += _values_size(body.get("ExpressionAttributeValues"))
    elif kind == "Delete":
        plan = DeletePlan(key, condition)
    else:
        assert condition is not None  # the service model requires ConditionExpression
        plan = CheckPlan(key, condition)
    if kind != "Delete" or condition is not None:
        # DynamoDB lets a transaction's Put or Delete without a condition carry
        # names and values it never uses (captured by ExtendDB).
        context.check_all_used()
    return WriteAction(index, kind, table_name, key, plan, return_old, request_bytes)  # type: ignore[arg-type]


def _kind_of(element: Any) -> str:
    """The one action of a TransactItems element."""
    if not isinstance(element, dict):
        raise ValidationException(MESSAGE_NO_ACTION)
    present = [kind for kind in WRITE_KINDS if element.get(kind) is not None]
    if len(present) == 1:
        return present[0]
    raise ValidationException(MESSAGE_ONE_ACTION if present else MESSAGE_NO_ACTION)


def _condition(body: dict[str, Any], context: ExpressionContext) -> Condition | None:
    text = body.get("ConditionExpression")
    if text is None:
        return None
    return compile_condition(text, context, "ConditionExpression")


def _values_size(values: dict[str, Any] | None) -> int:
    """The request bytes of the values. They are not checked yet: a JSON null
    member counts as absent (``{"N": "1", "S": null}`` is the number, as the
    expression's own check takes it), and a value that is not one typed
    value counts nothing (that check refuses it)."""
    if not values:
        return 0
    total = 0
    for name, value in values.items():
        if type(value) is dict:
            typed = {kind: inner for kind, inner in value.items() if inner is not None}
            if len(typed) == 1:
                total += item_size({name: typed})
    return total


def bind(action: WriteAction, schema: TableSchema) -> dict[str, Any] | None:
    """The checks that need the table; fills in the storage key.

    As DynamoDB (captured by dynoxide and others): a key that does not match
    the schema (missing, wrong type, too large) cancels the transaction with
    a ValidationError reason for that action, returned here; an empty key
    value and an update of a key attribute are plain ValidationExceptions."""
    action.schema = schema
    plan = action.plan
    if isinstance(plan, UpdatePlan) and plan.update is not None:
        refuse_key_updates(schema, plan.update.top_level_names)
    reason = key_problem(schema, action.key_source, whole_item=action.kind == "Put")
    if reason is None:
        action.storage_key = schema.encode_key(action.key_source)
    return reason


def key_problem(schema: TableSchema, key_source: Item, whole_item: bool = False) -> dict[str, Any] | None:
    """The ValidationError reason of a key that does not fit the table, or None."""
    try:
        if whole_item:
            check_item_key(schema, key_source)
        else:
            check_key(schema, key_source)
    except ValidationException as error:
        if error.message is not None and EMPTY_KEY_VALUE in error.message:
            raise
        return cancellation_reason("ValidationError", error.message)
    return None


def cancel_on_key_problems(problems: list[dict[str, Any] | None]) -> None:
    """Key problems cancel before duplicates or conditions are looked at."""
    if any(problems):
        raise cancelled([problem or cancellation_reason("None") for problem in problems])


def check_request(actions: list[WriteAction]) -> None:
    """No item twice (by table and key), at most 4 MB of items in all."""
    seen: set[tuple[str, bytes, bytes]] = set()
    for action in actions:
        assert action.schema is not None
        identity = (action.schema.name, *action.storage_key)
        if identity in seen:
            raise ValidationException(MESSAGE_SAME_ITEM)
        seen.add(identity)
    if sum(action.request_bytes for action in actions) > limits.TRANSACT_MAX_BYTES:
        raise ValidationException(MESSAGE_TOO_LARGE)


# --- evaluation against one state ------------------------------------------------------------


@dataclass(slots=True)
class Evaluation:
    """What a transaction does: ``mutations[i]`` for action i (None for a
    ConditionCheck), or ``reasons`` when it is cancelled."""

    mutations: list[Mutation | None] = field(default_factory=list)
    reasons: list[dict[str, Any]] = field(default_factory=list)
    cancelled: bool = False


def evaluate(
    actions: list[WriteAction],
    old_items: list[Item | None],
    conflicting: frozenset[int] | set[int],
    now: float,
) -> Evaluation:
    """Run every action against the items as they are (one state: none sees
    another's write). An action covered by a conflict (``conflicting``)
    reports TransactionConflict; a false condition ConditionalCheckFailed
    (with the item when ALL_OLD was asked); an update that cannot apply
    ValidationError. Any of these cancels the whole transaction."""
    result = Evaluation()
    for action, old_item in zip(actions, old_items, strict=True):
        if action.index in conflicting:
            result.reasons.append(cancellation_reason("TransactionConflict", MESSAGE_CONFLICT))
            result.mutations.append(None)
            result.cancelled = True
            continue
        try:
            outcome = _apply(action, old_item, now)
        except ValidationException as error:
            result.reasons.append(cancellation_reason("ValidationError", error.message))
            result.mutations.append(None)
            result.cancelled = True
            continue
        if isinstance(outcome, ConditionFailed):
            item = outcome.old_item if action.return_old_on_failure else None
            result.reasons.append(
                cancellation_reason("ConditionalCheckFailed", MESSAGE_CONDITION_FAILED, item)
            )
            result.mutations.append(None)
            result.cancelled = True
            continue
        result.reasons.append(cancellation_reason("None"))
        result.mutations.append(outcome)
    return result


def _apply(action: WriteAction, old_item: Item | None, now: float) -> Mutation | ConditionFailed | None:
    plan = action.plan
    if isinstance(plan, CheckPlan):
        return None if plan.condition.evaluate(old_item) else ConditionFailed(old_item)
    return apply(plan, old_item, now)


def cancellation_reason(
    code: str, message: str | None = None, item: Item | None = None
) -> dict[str, Any]:
    """One CancellationReasons entry; a successful action is just ``{"Code": "None"}``."""
    reason: dict[str, Any] = {"Code": code}
    if message is not None:
        reason["Message"] = message
    if item is not None:
        reason["Item"] = item
    return reason


def cancelled(reasons: list[dict[str, Any]]) -> TransactionCanceledException:
    """DynamoDB's TransactionCanceledException; its body spells ``Message``
    with a capital M, as the service does, next to ``CancellationReasons``."""
    codes = ", ".join(reason["Code"] for reason in reasons)
    message = f"{MESSAGE_CANCELLED} [{codes}]"
    error = TransactionCanceledException(None, Message=message, CancellationReasons=reasons)
    error.message = message
    return error


# --- capacity ------------------------------------------------------------------------------


def write_units_by_table(actions: list[WriteAction], sizes: list[int]) -> dict[str, float]:
    """Twice the plain write units of each action (1 per KB of the larger
    of the item before and after, at least 1), summed per table in order."""
    units: dict[str, float] = {}
    for action, size_bytes in zip(actions, sizes, strict=True):
        assert action.schema is not None
        whole = max(1, -(-size_bytes // limits.WRITE_UNIT_BYTES))
        units[action.schema.name] = units.get(action.schema.name, 0.0) + float(
            whole * CAPACITY_FACTOR
        )
    return units


def read_units_by_table(tables: list[str], sizes: list[int]) -> dict[str, float]:
    """Twice the strongly consistent read units of each item (1 per 4 KB,
    at least 1), summed per table in order."""
    units: dict[str, float] = {}
    for name, size_bytes in zip(tables, sizes, strict=True):
        whole = max(1, -(-size_bytes // limits.READ_UNIT_BYTES))
        units[name] = units.get(name, 0.0) + float(whole * CAPACITY_FACTOR)
    return units


# --- ClientRequestToken ---------------------------------------------------------------------


def request_fingerprint(request: dict[str, Any]) -> bytes:
    """What must be equal for a retry to count as the same request: the
    actions (not ReturnConsumedCapacity, whose answer may differ anyway)."""
    material = {
        "TransactItems": request.get("TransactItems"),
        "ReturnItemCollectionMetrics": request.get("ReturnItemCollectionMetrics"),
    }
    try:
        encoded = orjson.dumps(material, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson's recursion limit: a value nested hundreds of levels deep
        raise ValidationException(MESSAGE_NESTING) from None
    return hashlib.sha256(encoded).digest()


def token_record(fingerprint: bytes, now: float, window_seconds: float = TOKEN_WINDOW_SECONDS) -> bytes:
    """What is stored for a completed request's ClientRequestToken: its
    fingerprint and when the token expires (the database clock)."""
    return orjson.dumps({"fingerprint": fingerprint.hex(), "expires": now + window_seconds})


def replays(record: bytes | None, fingerprint: bytes, now: float) -> bool:
    """Whether a request whose token has ``record`` stored (None: none) is a
    retry of a completed request, to answer without applying again; the
    same token with other parameters is IdempotentParameterMismatchException.
    An expired token starts a new request."""
    if record is None:
        return False
    stored = orjson.loads(record)
    if stored["expires"] <= now:
        return False
    if bytes.fromhex(stored["fingerprint"]) != fingerprint:
        raise IdempotentParameterMismatchException(MESSAGE_TOKEN_MISMATCH)
    return True


def token_expired(record: bytes, now: float) -> bool:
    """Whether a stored token record may be forgotten (the TTL sweeper's pass)."""
    return bool(orjson.loads(record)["expires"] <= now)

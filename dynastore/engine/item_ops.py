"""The pure core of the single-item writes: plans, and ``apply``.

A plan is everything a PutItem, UpdateItem or DeleteItem decided from its
request before touching storage: the validated item or key, the compiled
condition and update. ``apply(plan, old_item, now)`` runs the plan against the
item as it is now (``None`` when absent) and returns either the ``Mutation``
to write or ``ConditionFailed``. It reads no clock and no storage, so the
same plan can be applied again, e.g. by a storage that retries after a
compare-and-set conflict, and so TransactWriteItems can reuse it.

The request-level checks shared by the item operations also live here, in
plain Python terms (no wire parameter names): key validation with DynamoDB's
messages, item size, key-attribute update refusal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from dynastore import limits
from dynastore.engine.schema import KeyAttribute, TableSchema
from dynastore.errors import ValidationException, invalid_parameter, key_schema_mismatch
from dynastore.types.size import item_size, oversized

Item = dict[str, Any]

MESSAGE_ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"
MESSAGE_UPDATED_ITEM_TOO_LARGE = "Item size to update has exceeded the maximum allowed size"
MESSAGE_PARTITION_KEY_TOO_LARGE = (
    "Size of hashkey has exceeded the maximum size limit of"
    f"{limits.PARTITION_KEY_MAX_BYTES} bytes"
)  # sic: DynamoDB's message has no space before the number
MESSAGE_SORT_KEY_TOO_LARGE = (
    "Aggregated size of all range keys has exceeded the size limit of "
    f"{limits.SORT_KEY_MAX_BYTES} bytes"
)


class Condition(Protocol):
    """A compiled ConditionExpression (dynastore.expressions.compile_condition)."""

    def evaluate(self, item: Item | None) -> bool: ...


class Update(Protocol):
    """A compiled UpdateExpression (dynastore.expressions.compile_update)."""

    @property
    def text(self) -> str:
        """The UpdateExpression it was compiled from."""
        ...

    @property
    def top_level_names(self) -> Iterable[str]:
        """The top-level attributes the update writes or removes."""
        ...

    @property
    def only_removes(self) -> bool:
        """True when every action is a REMOVE or a DELETE."""
        ...

    def apply(self, item: Item, exists: bool = True) -> Item:
        """The item after the update (``exists`` False: ``item`` is only
        the key of a missing item)."""
        ...

    def updated_attributes(self, item: Item) -> Item:
        """The parts of ``item`` at the paths the update writes or removes."""
        ...


# --- plans and outcomes ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PutPlan:
    item: Item
    size_bytes: int
    condition: Condition | None = None


@dataclass(frozen=True, slots=True)
class DeletePlan:
    key: Item
    condition: Condition | None = None


@dataclass(frozen=True, slots=True)
class UpdatePlan:
    key: Item
    update: Update | None = None
    condition: Condition | None = None
    size_overhead: int = 0
    """Bytes DynamoDB adds when it measures an update against the 400 KB
    limit (see ``update_size_overhead``)."""


Plan = PutPlan | DeletePlan | UpdatePlan


def creates_nothing(plan: UpdatePlan) -> bool:
    """An update whose every action takes something away (REMOVE, DELETE,
    AttributeUpdates' DELETE) leaves a missing item missing: DynamoDB
    creates no item with just its key then (an empty update does create it)."""
    return plan.update is not None and plan.update.only_removes


@dataclass(frozen=True, slots=True)
class Mutation:
    """What to write: ``new_item`` replaces the item, or deletes it when None."""

    old_item: Item | None
    new_item: Item | None
    new_size: int  # 0 when the item is deleted


@dataclass(frozen=True, slots=True)
class ConditionFailed:
    """The condition was false against ``old_item``; nothing is written."""

    old_item: Item | None


def apply(
    plan: Plan, old_item: Item | None, now: float, old_size: int | None = None
) -> Mutation | ConditionFailed:
    """Run ``plan`` against the current item (None when absent).

    ``now`` is the operation's time (epoch seconds), reserved for the
    time-dependent rules (TTL, streams) so that none of them reads a clock.
    ``old_size``, the current item's size when the caller knows it (the
    stored row's), lets an update measure only the attributes it touched.
    Raises ValidationException for an update that cannot apply to this item
    (wrong operand type, missing document path, item too large).
    """
    if plan.condition is not None and not plan.condition.evaluate(old_item):
        return ConditionFailed(old_item)
    if type(plan) is PutPlan:
        return Mutation(old_item, plan.item, plan.size_bytes)
    if type(plan) is DeletePlan:
        return Mutation(old_item, None, 0)
    assert isinstance(plan, UpdatePlan)
    new_item = updated_item(plan, old_item)
    size_bytes = updated_size(plan, old_item, new_item, old_size)
    if size_bytes - item_size(plan.key) + plan.size_overhead > limits.ITEM_MAX_BYTES:
        raise ValidationException(MESSAGE_UPDATED_ITEM_TOO_LARGE)
    return Mutation(old_item, new_item, size_bytes)


def updated_size(
    plan: UpdatePlan, old_item: Item | None, new_item: Item, old_size: int | None
) -> int:
    """The size of ``new_item``. An item's size is a sum over its top-level
    attributes, so when the old size is known only the attributes the update
    wrote or removed are measured, not the whole item again."""
    if old_size is None or old_item is None or plan.update is None:
        return item_size(new_item)
    names = plan.update.top_level_names
    before = {name: old_item[name] for name in names if name in old_item}
    after = {name: new_item[name] for name in names if name in new_item}
    return old_size - item_size(before) + item_size(after)


UPDATE_OVERHEAD_BYTES = limits.UPDATE_ITEM_OVERHEAD_BYTES
UPDATE_WRITE_ACTION_BYTES = limits.UPDATE_ITEM_WRITE_ACTION_BYTES
UPDATE_CLEAR_ACTION_BYTES = limits.UPDATE_ITEM_CLEAR_ACTION_BYTES


def update_size_overhead(keywords: Iterable[str]) -> int:
    """How DynamoDB measures an update against the item size limit, as
    dynoxide measured it on the live service: the item without its key
    attributes, plus 3 bytes for the update, 19 per action that writes a value
    (SET, ADD) and 2 per action that clears one (REMOVE, DELETE). So an item
    PutItem can still write may be out of UpdateItem's reach."""
    overhead = UPDATE_OVERHEAD_BYTES
    for keyword in keywords:
        if keyword in ("SET", "ADD"):
            overhead += UPDATE_WRITE_ACTION_BYTES
        else:
            overhead += UPDATE_CLEAR_ACTION_BYTES
    return overhead


def updated_item(plan: UpdatePlan, old_item: Item | None) -> Item:
    """The item after the update: an absent item starts as just its key
    (UpdateItem creates it); no UpdateExpression leaves the item as it is."""
    base = dict(plan.key) if old_item is None else old_item
    if plan.update is None:
        return dict(base)
    return plan.update.apply(base, exists=old_item is not None)


# --- keys ---------------------------------------------------------------------------


def check_key(schema: TableSchema, key: Item) -> None:
    """A Key parameter (values already validated) checked against the table:
    exactly the key attributes, of the right types, non-empty, within the
    size limits."""
    schema.check_key_shape(key)
    check_key_sizes(schema, key)


def check_item_key(schema: TableSchema, item: Item) -> None:
    """PutItem's checks of the key attributes inside a validated item."""
    for attribute in _key_attributes(schema):
        value = item.get(attribute.name)
        if value is None:
            raise invalid_parameter(f"Missing the key {attribute.name} in the item")
        if attribute.type not in value:
            actual = next(iter(value))
            raise invalid_parameter(
                f"Type mismatch for key {attribute.name} expected: {attribute.type} "
                f"actual: {actual}"
            )
        _check_not_empty(attribute, value)
    check_key_sizes(schema, item)


def check_batch_item_key(schema: TableSchema, item: Item) -> None:
    """BatchWriteItem's PutRequest reports any key problem as a schema mismatch."""
    for attribute in _key_attributes(schema):
        value = item.get(attribute.name)
        if value is None or attribute.type not in value:
            raise key_schema_mismatch()
        _check_not_empty(attribute, value)
    check_key_sizes(schema, item)


def check_key_sizes(schema: TableSchema, item: Item) -> None:
    partition_value = item[schema.partition_key.name]
    if oversized(partition_value, limits.PARTITION_KEY_MAX_BYTES):
        raise invalid_parameter(MESSAGE_PARTITION_KEY_TOO_LARGE)
    sort_key = schema.sort_key
    if sort_key is not None and oversized(item[sort_key.name], limits.SORT_KEY_MAX_BYTES):
        raise invalid_parameter(MESSAGE_SORT_KEY_TOO_LARGE)


def _key_attributes(schema: TableSchema) -> tuple[KeyAttribute, ...]:
    if schema.sort_key is None:
        return (schema.partition_key,)
    return (schema.partition_key, schema.sort_key)


def _check_not_empty(attribute: KeyAttribute, value: dict[str, Any]) -> None:
    if value[attribute.type] == "":
        kind = "string" if attribute.type == "S" else "binary"
        raise ValidationException(
            "One or more parameter values are not valid. The AttributeValue for a key "
            f"attribute cannot contain an empty {kind} value. Key: {attribute.name}"
        )


def check_item_size(item: Item) -> int:
    """The item's size, or DynamoDB's error when it is over 400 KB."""
    size_bytes = item_size(item)
    if size_bytes > limits.ITEM_MAX_BYTES:
        raise ValidationException(MESSAGE_ITEM_TOO_LARGE)
    return size_bytes


def refuse_key_updates(schema: TableSchema, updated_names: Iterable[str]) -> None:
    """An update may not touch a key attribute, not even inside it."""
    updated = set(updated_names)
    for name in schema.key_names:
        if name in updated:
            raise invalid_parameter(
                f"Cannot update attribute {name}. This attribute is part of the key"
            )

"""Hypothesis properties of backups and PITR (issue 19, section 5), on the
embedded API over the memory store (fast: no sockets, no disk).

- A restore equals its source item for item, as of the backup's time, over
  random tables (key types, a sort key or not, a GSI or not) and random
  writes, including writes made *while* the backup and the restore copy
  their pages (the jobs are stepped on an event loop between the writes,
  a page of 2 items at a time).
- PITR at a random instant equals a replay of the writes made up to that
  instant (the database clock is a manual one: writes happen at whole
  seconds, several per second or seconds apart; boto3 sends RestoreDateTime
  in whole seconds), including writes made while the restore runs.

Failing examples are printed by hypothesis (with ``--hypothesis-seed`` to
replay them).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dynastore
from dynastore import limits
from dynastore.backups import jobs

PROPERTY_SETTINGS = settings(max_examples=40, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
KEY_TYPES = ("S", "N", "B")
START = 1_800_000_000.0


def key_value(kind: str, number: int) -> dict[str, Any]:
    if kind == "S":
        return {"S": f"k{number}"}
    if kind == "N":
        return {"N": str(number - 3)}
    return {"B": bytes([number])}


scalars = st.one_of(
    st.text(max_size=8).map(lambda text: {"S": text}),
    st.integers(-10**6, 10**6).map(lambda number: {"N": str(number)}),
    st.binary(max_size=6).map(lambda data: {"B": data}),
    st.booleans().map(lambda flag: {"BOOL": flag}),
    st.just({"NULL": True}),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3).map(lambda items: {"L": items}),
    st.dictionaries(st.sampled_from(["x", "y", "z"]), scalars, max_size=3).map(lambda m: {"M": m}),
)
attributes = st.dictionaries(st.sampled_from(["a", "b", "c", "g"]), values, max_size=3)


@dataclass(frozen=True)
class Write:
    kind: str  # put | delete | update
    pk: int
    sk: int
    attributes: dict[str, Any]
    pause_seconds: int = 0
    """How far the clock moves before this write (PITR property)."""


writes = st.lists(st.builds(
    Write,
    kind=st.sampled_from(["put", "put", "delete", "update"]),
    pk=st.integers(0, 5), sk=st.integers(0, 3), attributes=attributes,
    pause_seconds=st.sampled_from([0, 0, 1, 2]),
), max_size=25)


@dataclass
class Table:
    name: str
    pk_type: str
    sk_type: str | None
    with_index: bool

    def key(self, write: Write) -> dict[str, Any]:
        key = {"pk": key_value(self.pk_type, write.pk)}
        if self.sk_type is not None:
            key["sk"] = key_value(self.sk_type, write.sk)
        return key

    def create_arguments(self, name: str | None = None) -> dict[str, Any]:
        schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
        definitions = [{"AttributeName": "pk", "AttributeType": self.pk_type}]
        if self.sk_type is not None:
            schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
            definitions.append({"AttributeName": "sk", "AttributeType": self.sk_type})
        arguments: dict[str, Any] = {"TableName": name or self.name, "KeySchema": schema,
                                     "AttributeDefinitions": definitions, "BillingMode": "PAY_PER_REQUEST"}
        if self.with_index:
            definitions.append({"AttributeName": "g", "AttributeType": "S"})
            arguments["GlobalSecondaryIndexes"] = [{"IndexName": "by-g", "KeySchema": [
                {"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]
        return arguments


tables = st.builds(Table, name=st.just("source"), pk_type=st.sampled_from(KEY_TYPES),
                   sk_type=st.one_of(st.none(), st.sampled_from(KEY_TYPES)), with_index=st.booleans())


@dataclass
class Place:
    """An embedded in-memory database on a manual clock, whose backup jobs
    run on ``loop`` only when ``step`` lets them."""

    database: Any
    client: Any
    loop: asyncio.AbstractEventLoop
    now: list[float] = field(default_factory=lambda: [START])

    def step(self, iterations: int = 1) -> None:
        for _ in range(iterations):
            self.loop.run_until_complete(asyncio.sleep(0))

    def drain(self, done: Callable[[], bool]) -> None:
        for _ in range(10_000):
            if done():
                return
            self.step(5)
        raise AssertionError("the job did not end")


@pytest.fixture(autouse=True, scope="module")
def small_pages() -> Iterator[None]:
    """The jobs copy 2 items a step: many pages, many interleavings."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jobs, "JOB_PAGE_ROWS", 2)
        yield


@contextmanager
def place() -> Iterator[Place]:
    now = [START]
    database = dynastore.open(clock=lambda: now[0])
    loop = asyncio.new_event_loop()
    database.database.background_loop = loop
    try:
        yield Place(database, database.client(), loop, now)
    finally:
        database.close()
        loop.close()


def model_apply(model: dict[str, dict[str, Any]], table: Table, write: Write) -> None:
    """What DynamoDB does with ``write``, on a dict of items."""
    key = table.key(write)
    identity = canonical([key])[0]
    attributes = usable(table, write.attributes)
    if write.kind == "delete":
        model.pop(identity, None)
    elif write.kind == "put":
        model[identity] = {**attributes, **key}
    else:
        model[identity] = {**model.get(identity, key), **attributes}


def send(client: Any, table: Table, write: Write, model: dict[str, dict[str, Any]]) -> None:
    model_apply(model, table, write)
    key = table.key(write)
    attributes = usable(table, write.attributes)
    if write.kind == "delete":
        client.delete_item(TableName=table.name, Key=key)
    elif write.kind == "put":
        client.put_item(TableName=table.name, Item={**attributes, **key})
    elif attributes:
        names = {f"#n{i}": name for i, name in enumerate(attributes)}
        client.update_item(TableName=table.name, Key=key,
                           UpdateExpression="SET " + ", ".join(f"#n{i} = :v{i}" for i in range(len(names))),
                           ExpressionAttributeNames=names,
                           ExpressionAttributeValues={f":v{i}": value for i, value in
                                                      enumerate(attributes.values())})
    else:
        client.update_item(TableName=table.name, Key=key)


def canonical(items: list[dict[str, Any]]) -> list[str]:
    """Items as sorted JSON texts (maps' order and bytes' type aside)."""
    return sorted(json.dumps(item, sort_keys=True, default=lambda data: bytes(data).hex()) for item in items)


def usable(table: Table, attributes: dict[str, Any]) -> dict[str, Any]:
    """``attributes`` without a ``g`` the table's index cannot take (its key is a non-empty S)."""
    if not table.with_index or "g" not in attributes:
        return attributes
    value = attributes["g"]
    if "S" in value and value["S"]:
        return attributes
    return {name: found for name, found in attributes.items() if name != "g"}


def scan(client: Any, name: str, **extra: Any) -> list[str]:
    found: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"TableName": name, **extra}
    while True:
        page = client.scan(**arguments)
        found.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return canonical(found)
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def is_active(client: Any, name: str) -> bool:
    try:
        return bool(client.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE")
    except client.exceptions.ResourceNotFoundException:
        return False


@PROPERTY_SETTINGS
@given(table=tables, before=writes, during_backup=writes, during_restore=writes)
def test_a_restore_equals_its_source_as_of_the_backup(table: Table,
                                                      before: list[Write], during_backup: list[Write],
                                                      during_restore: list[Write]) -> None:
    with place() as here:
        client = here.client
        client.create_table(**table.create_arguments())
        model: dict[str, dict[str, Any]] = {}
        for write in before:
            send(client, table, write, model)
        expected = canonical(list(model.values()))
        indexed = sum(1 for item in model.values() if "g" in item)
        arn = client.create_backup(TableName=table.name, BackupName="property")["BackupDetails"]["BackupArn"]
        here.now[0] += 0.001  # (a write in the very microsecond of the backup's time belongs to it)
        for write in during_backup:  # the backup copies 2 items a step meanwhile
            here.now[0] += write.pause_seconds
            send(client, table, write, model)
            here.step()

        def available() -> bool:
            details = client.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]
            return bool(details["BackupStatus"] == "AVAILABLE")

        here.drain(available)
        client.restore_table_from_backup(BackupArn=arn, TargetTableName="restored")
        for write in during_restore:
            send(client, table, write, model)
            here.step()
        here.drain(lambda: is_active(client, "restored"))
        assert scan(client, "restored", ConsistentRead=True) == expected
        assert scan(client, table.name, ConsistentRead=True) == canonical(list(model.values()))
        if table.with_index:
            assert len(scan(client, "restored", IndexName="by-g")) == indexed


@PROPERTY_SETTINGS
@given(table=tables, before=writes, logged=writes, during_restore=writes, pick=st.integers(0, 10**6))
def test_pitr_at_an_instant_equals_the_replay_of_the_writes_until_then(
        table: Table, before: list[Write], logged: list[Write],
        during_restore: list[Write], pick: int) -> None:
    with place() as here:
        client = here.client
        client.create_table(**table.create_arguments())
        model: dict[str, dict[str, Any]] = {}
        for write in before:
            send(client, table, write, model)
        here.now[0] += 1
        client.update_continuous_backups(TableName=table.name, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        enabled_at = here.now[0]
        history: list[tuple[float, list[str]]] = [(enabled_at, canonical(list(model.values())))]
        for write in logged:
            here.now[0] += write.pause_seconds
            send(client, table, write, model)
            if history[-1][0] == here.now[0]:
                history.pop()  # the instant's state is the one after its last write
            history.append((here.now[0], canonical(list(model.values()))))
        here.now[0] += 1
        instants = [enabled_at + second for second in range(int(here.now[0] - enabled_at) + 1)]
        instant = instants[pick % len(instants)]
        expected = [state for at, state in history if at <= instant][-1]
        here.now[0] += limits.PITR_LATEST_RESTORABLE_LAG_SECONDS  # every instant restorable now
        client.restore_table_to_point_in_time(SourceTableName=table.name, TargetTableName="then",
                                              RestoreDateTime=datetime.fromtimestamp(instant, tz=UTC))
        here.now[0] += 1  # (a write in the very microsecond restored to belongs to it)
        for write in during_restore:  # later writes, as the restore copies its pages
            here.now[0] += write.pause_seconds
            send(client, table, write, model)
            here.step()
        here.drain(lambda: is_active(client, "then"))
        assert scan(client, "then", ConsistentRead=True) == expected

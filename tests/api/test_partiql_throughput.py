"""PartiQL under the throughput model and fault rules: each statement is
accounted and faulted as the item operation it runs (embedded database,
manual clock: nothing sleeps)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import dynastore
from dynastore.throughput import enable


class ManualClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def env() -> Iterator[tuple[Any, Any, ManualClock]]:
    clock = ManualClock()
    with dynastore.open() as embedded:
        embedded.database.clock = clock
        enable(embedded.database)
        client = embedded.client(config=Config(retries={"total_max_attempts": 1}))
        client.create_table(
            TableName="tbl", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 3},
        )
        yield client, embedded.database, clock


def code_of(call: Any) -> str:
    with pytest.raises(ClientError) as excinfo:
        call()
    return str(excinfo.value.response["Error"]["Code"])


def insert(client: Any, pk: str) -> Any:
    return client.execute_statement(Statement=f"INSERT INTO \"tbl\" VALUE {{'pk': '{pk}'}}")


def test_writes_throttle_as_puts_do(env: Any) -> None:
    client, _, clock = env
    for i in range(3):
        insert(client, f"k{i}")
    assert code_of(lambda: insert(client, "k9")) == "ProvisionedThroughputExceededException"
    clock.now += 1
    insert(client, "k9")


def test_a_duplicate_insert_is_charged(env: Any) -> None:
    client, _, _ = env
    insert(client, "a")
    assert code_of(lambda: insert(client, "a")) == "DuplicateItemException"
    insert(client, "b")
    assert code_of(lambda: insert(client, "c")) == "ProvisionedThroughputExceededException"


def test_reads_use_the_read_bucket_and_eventual_costs_half(env: Any) -> None:
    client, _, _ = env
    insert(client, "a")
    select = "SELECT * FROM \"tbl\" WHERE pk = 'a'"
    for _ in range(4):
        client.execute_statement(Statement=select)
    assert code_of(lambda: client.execute_statement(Statement=select)) == "ProvisionedThroughputExceededException"


def test_batch_members_are_throttled_one_by_one(env: Any) -> None:
    client, _, _ = env
    response = client.batch_execute_statement(Statements=[
        {"Statement": f"INSERT INTO \"tbl\" VALUE {{'pk': 'b{i}'}}"} for i in range(4)])
    codes = [entry.get("Error", {}).get("Code") for entry in response["Responses"]]
    assert codes == [None, None, None, "ProvisionedThroughputExceeded"]


def test_fault_rules_of_the_item_operation_fire(env: Any) -> None:
    client, database, _ = env
    database.faults.add("InternalServerError", operation="PutItem", table="tbl")
    assert code_of(lambda: insert(client, "x")) == "InternalServerError"
    insert(client, "x")
    database.faults.add("ProvisionedThroughputExceededException", operation="UpdateItem", table="tbl")
    update = "UPDATE \"tbl\" SET v = 1 WHERE pk = 'x'"
    assert code_of(lambda: client.execute_statement(Statement=update)) == "ProvisionedThroughputExceededException"
    client.execute_statement(Statement=update)

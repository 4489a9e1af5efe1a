"""Throughput model (issue 7), black-box through boto3 on an embedded
database whose clock the test holds: nothing sleeps, nothing depends on
machine speed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import dynastore
from dynastore.errors import ThrottlingException
from dynastore.ops import dispatch
from dynastore.throughput import enable, handle_admin_metrics, prometheus_metrics


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
        yield client, embedded.database, clock


def error_of(call: Any) -> dict[str, Any]:
    """The botocore error of a call that must fail: {"Code", "Message"}."""
    try:
        call()
    except ClientError as error:
        return dict(error.response["Error"])
    pytest.fail("the call did not fail")


def provisioned(client: Any, name: str, read: int, write: int, **extra: Any) -> str:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    )
    return name


def bulk_put(database: Any, table: str, keys: Any) -> None:
    """Many PutItems through the dispatcher the HTTP and embedded paths use
    (boto3 for a thousand calls would make the test slow); the calls that
    decide the test go through boto3."""
    for pk in keys:
        dispatch(database, "PutItem", {"TableName": table, "Item": {"pk": {"S": pk}}})


def put(client: Any, table: str, pk: str, **extra: Any) -> Any:
    return client.put_item(TableName=table, Item={"pk": {"S": pk}}, **extra)


def test_provisioned_table_throttles_over_its_rate_and_recovers(env: Any) -> None:
    client, _, clock = env
    provisioned(client, "tbl", 5, 5)
    for i in range(5):
        put(client, "tbl", f"k{i}")
    error = error_of(lambda: put(client, "tbl", "k9"))
    assert error["Code"] == "ProvisionedThroughputExceededException"
    assert "The level of configured provisioned throughput for the table was exceeded" in error["Message"]
    clock.now += 1
    put(client, "tbl", "k9")


def test_throttling_reasons_name_the_table(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 1, 1)
    put(client, "tbl", "a")
    try:
        put(client, "tbl", "b")
    except client.exceptions.ProvisionedThroughputExceededException as error:
        reasons = error.response["ThrottlingReasons"]
    else:
        pytest.fail("not throttled")
    assert reasons[0]["reason"] == "TableWriteProvisionedThroughputExceeded"
    assert reasons[0]["resource"].endswith(":table/tbl")


def test_burst_keeps_at_most_300_seconds(env: Any) -> None:
    client, database, clock = env
    provisioned(client, "tbl", 1, 1)
    clock.now += 1000  # idle: only 300 seconds are kept
    bulk_put(database, "tbl", [f"k{i}" for i in range(300)])
    assert error_of(lambda: put(client, "tbl", "x"))["Code"] == "ProvisionedThroughputExceededException"


def test_reads_use_the_read_bucket_and_eventual_costs_half(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 1, 10)
    put(client, "tbl", "a")
    client.get_item(TableName="tbl", Key={"pk": {"S": "a"}})  # 0.5
    client.get_item(TableName="tbl", Key={"pk": {"S": "a"}})  # 0.5 -> bucket empty
    error = error_of(lambda: client.get_item(TableName="tbl", Key={"pk": {"S": "a"}}))
    assert error["Code"] == "ProvisionedThroughputExceededException"


def test_hot_key_throttles_while_the_table_is_at_ten_percent(env: Any) -> None:
    client, database, _ = env
    provisioned(client, "tbl", 30, 9_990)  # 30/3000 + 9990/1000 = 10 partitions
    bulk_put(database, "tbl", ["2026-11-29"] * 1000)
    try:
        put(client, "tbl", "2026-11-29")
    except client.exceptions.ProvisionedThroughputExceededException as error:
        reasons = error.response["ThrottlingReasons"]
    else:
        pytest.fail("a hot key was not throttled")
    assert reasons == [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": reasons[0]["resource"]}]
    put(client, "tbl", "another-day")  # other partitions are fine
    status, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    table = metrics["Tables"]["tbl"]
    assert status == 200
    assert table["PartitionCount"] == 10
    assert table["WriteUnits"] == 1001
    assert table["TopKeys"][0]["Key"] == {"pk": {"S": "2026-11-29"}}
    assert table["TopThrottledKeys"][0]["ThrottledRequests"] == 1
    assert table["ThrottlesByReason"] == {"TableWriteKeyRangeThroughputExceeded": 1}


def test_write_sharding_over_ten_suffixes_is_not_throttled(env: Any) -> None:
    client, database, _ = env
    provisioned(client, "tbl", 30, 9_990)
    bulk_put(database, "tbl", [f"2026-11-29#{i % 10}" for i in range(1500)])
    for i in range(10):
        put(client, "tbl", f"2026-11-29#{i}")


def test_on_demand_maximum_throttles_with_throttling_exception(env: Any) -> None:
    client, database, clock = env
    client.create_table(
        TableName="odt",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        OnDemandThroughput={"MaxWriteRequestUnits": 3, "MaxReadRequestUnits": 3},
    )
    for i in range(3):
        put(client, "odt", f"k{i}")
    try:
        put(client, "odt", "x")
    except client.exceptions.ClientError as error:
        assert error.response["Error"]["Code"] == "ThrottlingException"
        assert "check if you have a hot key" in error.response["Error"]["Message"]
    else:
        pytest.fail("not throttled")
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    assert metrics["Tables"]["odt"]["ThrottlesByReason"] == {"TableWriteMaxOnDemandThroughputExceeded": 1}
    clock.now += 1
    put(client, "odt", "x")


def test_batch_write_returns_throttled_items_unprocessed(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 1, 3)
    requests = [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}}}} for i in range(5)]
    response = client.batch_write_item(RequestItems={"tbl": requests})
    assert response["UnprocessedItems"]["tbl"] == requests[3:]
    error = error_of(lambda: client.batch_write_item(RequestItems={"tbl": requests[3:]}))
    assert error["Code"] == "ProvisionedThroughputExceededException"


def test_batch_get_returns_throttled_keys_unprocessed(env: Any) -> None:
    client, _, clock = env
    provisioned(client, "tbl", 1, 10)
    for i in range(4):
        put(client, "tbl", f"k{i}")
    keys = [{"pk": {"S": f"k{i}"}} for i in range(4)]
    response = client.batch_get_item(RequestItems={"tbl": {"Keys": keys, "ConsistentRead": True}})
    assert len(response["Responses"]["tbl"]) == 1
    assert response["UnprocessedKeys"]["tbl"] == {"Keys": keys[1:], "ConsistentRead": True}


def test_consumed_capacity_as_asked_or_not_at_all(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 100, 100)
    assert "ConsumedCapacity" not in put(client, "tbl", "a")
    total = put(client, "tbl", "a", ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"]
    # A plain write reports the aggregate alone; only transactions split it (issue 17).
    assert total == {"TableName": "tbl", "CapacityUnits": 1.0}
    got = client.get_item(TableName="tbl", Key={"pk": {"S": "a"}})
    assert "ConsumedCapacity" not in got and got["Item"] == {"pk": {"S": "a"}}
    got = client.get_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="INDEXES")
    assert got["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.5}}
    missing = client.get_item(TableName="tbl", Key={"pk": {"S": "zz"}})
    assert "Item" not in missing and "ConsumedCapacity" not in missing
    query = client.query(
        TableName="tbl", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "a"}}
    )
    assert query["Count"] == 1 and "ConsumedCapacity" not in query


def test_failed_conditional_write_is_charged(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 1, 2)
    put(client, "tbl", "a")
    error = error_of(lambda: put(client, "tbl", "a", ConditionExpression="attribute_not_exists(pk)"))
    assert error["Code"] == "ConditionalCheckFailedException"
    assert error_of(lambda: put(client, "tbl", "b"))["Code"] == "ProvisionedThroughputExceededException"


def test_transaction_throttled_is_cancelled_with_reasons(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 1, 1)
    put(client, "tbl", "a")
    try:
        client.transact_write_items(TransactItems=[{"Put": {"TableName": "tbl", "Item": {"pk": {"S": "b"}}}}])
    except client.exceptions.TransactionCanceledException as error:
        reasons = error.response["CancellationReasons"]
    else:
        pytest.fail("not cancelled")
    assert reasons[0]["Code"] == "ProvisionedThroughputExceeded"


def test_gsi_throttles_base_table_writes(env: Any) -> None:
    client, _, _ = env
    client.create_table(
        TableName="gsi",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "gk", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},
        GlobalSecondaryIndexes=[{
            "IndexName": "byg",
            "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        }],
    )
    client.put_item(TableName="gsi", Item={"pk": {"S": "a"}, "gk": {"S": "x"}})
    try:
        client.put_item(TableName="gsi", Item={"pk": {"S": "b"}, "gk": {"S": "x"}})
    except client.exceptions.ProvisionedThroughputExceededException as error:
        assert error.response["ThrottlingReasons"][0]["reason"] == "IndexWriteProvisionedThroughputExceeded"
        assert "global secondary indexes" in error.response["Error"]["Message"]
    else:
        pytest.fail("not throttled")


def test_per_table_enforcement_through_the_admin_route(env: Any) -> None:
    client, database, _ = env
    handle_admin_metrics(database, "POST", "/_dynastore/throughput", b'{"Mode": "observe"}')
    provisioned(client, "free", 1, 1)
    provisioned(client, "strict", 1, 1)
    status, answer = handle_admin_metrics(
        database, "POST", "/_dynastore/throughput", b'{"Mode": "enforce", "TableName": "strict"}'
    )
    assert status == 200 and answer["TableModes"] == {"strict": "enforce"}
    for i in range(3):
        put(client, "free", f"k{i}")
    put(client, "strict", "a")
    assert error_of(lambda: put(client, "strict", "b"))["Code"] == "ProvisionedThroughputExceededException"
    handle_admin_metrics(database, "POST", "/_dynastore/throughput", b'{"Mode": "off"}')
    assert database.throughput is None
    put(client, "strict", "b")


def test_hot_partition_reads_throttle_a_query(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 30_000, 10)  # 10 partitions of 3,000 RCU
    big = "x" * (390 * 1024)  # 98 RCU per strongly consistent read
    client.put_item(TableName="tbl", Item={"pk": {"S": "hot"}, "v": {"S": big}})

    def query() -> Any:
        return client.query(
            TableName="tbl",
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "hot"}},
            ConsistentRead=True,
            ProjectionExpression="pk",
        )

    for _ in range(31):  # 31 x 98 = 3,038 units: the partition is in debt
        assert query()["Count"] == 1
    try:
        query()
    except client.exceptions.ProvisionedThroughputExceededException as error:
        reasons = error.response["ThrottlingReasons"]
    else:
        pytest.fail("a hot partition was not throttled")
    assert reasons[0]["reason"] == "TableReadKeyRangeThroughputExceeded"


def test_update_table_raises_the_rate_and_splits_partitions(env: Any) -> None:
    client, database, clock = env
    provisioned(client, "tbl", 1, 1)
    put(client, "tbl", "a")
    assert error_of(lambda: put(client, "tbl", "b"))["Code"] == "ProvisionedThroughputExceededException"
    client.update_table(
        TableName="tbl", ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 5000}
    )
    clock.now += 1
    for i in range(100):
        put(client, "tbl", f"k{i}")
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    assert metrics["Tables"]["tbl"]["PartitionCount"] == 6  # 1/3000 + 5000/1000, rounded up
    assert metrics["Tables"]["tbl"]["WriteLimit"] == 5000


def test_transact_get_throttled_is_cancelled(env: Any) -> None:
    client, _, _ = env
    provisioned(client, "tbl", 1, 10)
    put(client, "tbl", "a")
    get = [{"Get": {"TableName": "tbl", "Key": {"pk": {"S": "a"}}}}]
    assert client.transact_get_items(TransactItems=get)["Responses"][0]["Item"] == {"pk": {"S": "a"}}
    try:
        client.transact_get_items(TransactItems=get)
    except client.exceptions.TransactionCanceledException as error:
        assert error.response["CancellationReasons"][0]["Code"] == "ProvisionedThroughputExceeded"
    else:
        pytest.fail("not cancelled")


def test_lsi_query_uses_the_table_capacity(env: Any) -> None:
    client, _, _ = env
    client.create_table(
        TableName="lsi",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "ls", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 10},
        LocalSecondaryIndexes=[{
            "IndexName": "byls",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "ls", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    client.put_item(TableName="lsi", Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "ls": {"S": "x"}})

    def query() -> Any:
        return client.query(
            TableName="lsi", IndexName="byls", ConsistentRead=True,
            KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "a"}},
        )

    assert query()["Count"] == 1
    assert error_of(query)["Code"] == "ProvisionedThroughputExceededException"


def test_metrics_show_operations_hints_and_prometheus_text(env: Any) -> None:
    client, database, _ = env
    provisioned(client, "tbl", 100, 1000)
    for _ in range(150):
        put(client, "tbl", "2026-11-29")
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    assert metrics["Operations"]["PutItem"]["Requests"] == 150
    hints = " ".join(metrics["Tables"]["tbl"]["Hints"])
    assert "100% of this table's capacity" in hints and "looks like a date" in hints
    text = prometheus_metrics(database).decode()
    assert 'dynastore_consumed_write_units_total{table="tbl",index="",partition=""} 150' in text
    assert 'dynastore_requests_total{operation="PutItem"} 150' in text


def test_control_plane_rate_is_2500_per_second(env: Any) -> None:
    _, database, clock = env
    for _ in range(2500):
        dispatch(database, "ListTables", {})
    with pytest.raises(ThrottlingException):
        dispatch(database, "ListTables", {})
    clock.now += 1
    dispatch(database, "ListTables", {})


def test_admin_routes_refuse_bad_requests(env: Any) -> None:
    _, database, _ = env
    assert handle_admin_metrics(database, "POST", "/_dynastore/metrics", None)[0] == 405
    assert handle_admin_metrics(database, "POST", "/_dynastore/throughput", b"{")[0] == 400
    assert handle_admin_metrics(database, "POST", "/_dynastore/throughput", b'{"Mode": "x"}')[0] == 400
    assert handle_admin_metrics(database, "GET", "/_dynastore/nothing", None)[0] == 404


def gsi_table(client: Any, name: str, projection: str = "KEYS_ONLY") -> str:
    """Table and GSI both far over a hot key's needs: 30,000 RCU and 20,000
    WCU each (30 partitions), so only a GSI partition can throttle."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "status", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 30_000, "WriteCapacityUnits": 20_000},
        GlobalSecondaryIndexes=[{
            "IndexName": "by-status",
            "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": projection},
            "ProvisionedThroughput": {"ReadCapacityUnits": 30_000, "WriteCapacityUnits": 20_000},
        }],
    )
    return name


def bulk_put_status(database: Any, table: str, statuses: Any) -> None:
    for i, status in enumerate(statuses):
        dispatch(database, "PutItem", {"TableName": table, "Item": {"pk": {"S": f"item-{i}"}, "status": {"S": status}}})


def test_a_constant_gsi_key_throttles_base_table_writes_by_its_gsi_partition(env: Any) -> None:
    client, database, clock = env
    gsi_table(client, "orders")
    bulk_put_status(database, "orders", ["active"] * 1000)  # 1,000 WCU/s on one GSI key
    try:
        client.put_item(TableName="orders", Item={"pk": {"S": "one-more"}, "status": {"S": "active"}})
    except client.exceptions.ProvisionedThroughputExceededException as error:
        reasons = error.response["ThrottlingReasons"]
        message = error.response["Error"]["Message"]
    else:
        pytest.fail("a hot GSI key did not throttle")
    assert reasons == [{"reason": "IndexWriteKeyRangeThroughputExceeded",
                        "resource": reasons[0]["resource"]}]
    assert reasons[0]["resource"].endswith(":table/orders/index/by-status")
    assert "global secondary indexes" in message
    # The table and its partitions are far under their limits: an item outside the GSI is written.
    client.put_item(TableName="orders", Item={"pk": {"S": "no-status"}})
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    table = metrics["Tables"]["orders"]
    assert table["WriteUnits"] == 1001 and table["WriteLimit"] == 20_000
    assert max(partition["WriteUnits"] for partition in table["Partitions"]) < 200
    index = table["Indexes"]["by-status"]
    assert index["PartitionCount"] == 30
    assert [partition["ThrottledRequests"] for partition in index["Partitions"]] == [1]  # one hot partition
    assert table["ThrottlesByReason"] == {"IndexWriteKeyRangeThroughputExceeded": 1}
    pkt = table["ContributorInsights"]["Indexes"]["by-status"]["Rules"]["PKT"]["1m"]
    assert pkt == [{"Key": {"status": {"S": "active"}}, "ThrottleEvents": 1.0}]
    assert any(hint.startswith('GSI by-status: its partition key {"status":{"S":"active"}} is hot')
               for hint in table["Hints"])
    clock.now += 1  # a second later the GSI partition has refilled
    client.put_item(TableName="orders", Item={"pk": {"S": "one-more"}, "status": {"S": "active"}})


def test_sharding_the_gsi_key_over_ten_suffixes_is_not_throttled(env: Any) -> None:
    client, database, _ = env
    gsi_table(client, "orders")
    bulk_put_status(database, "orders", [f"active#{i % 10}" for i in range(1500)])
    for i in range(10):
        client.put_item(TableName="orders", Item={"pk": {"S": f"x{i}"}, "status": {"S": f"active#{i}"}})
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    assert metrics["Tables"]["orders"]["ThrottlesByReason"] == {}
    assert len(metrics["Tables"]["orders"]["Indexes"]["by-status"]["Partitions"]) > 1  # spread


def test_a_hot_gsi_key_throttles_queries_on_the_index(env: Any) -> None:
    client, _, _ = env
    gsi_table(client, "orders", projection="ALL")
    big = "x" * (390 * 1024)  # 49 RCU per (eventually consistent) read of its GSI entry
    client.put_item(TableName="orders", Item={"pk": {"S": "a"}, "status": {"S": "hot"}, "v": {"S": big}})

    def query() -> Any:
        return client.query(TableName="orders", IndexName="by-status", KeyConditionExpression="#s = :s",
                            ExpressionAttributeNames={"#s": "status"},
                            ExpressionAttributeValues={":s": {"S": "hot"}}, ProjectionExpression="pk")

    for _ in range(62):  # 62 x 49 = 3,038 units: the GSI partition is in debt
        assert query()["Count"] == 1
    try:
        query()
    except client.exceptions.ProvisionedThroughputExceededException as error:
        reasons = error.response["ThrottlingReasons"]
    else:
        pytest.fail("a hot GSI partition was not throttled for reads")
    assert reasons[0]["reason"] == "IndexReadKeyRangeThroughputExceeded"
    assert reasons[0]["resource"].endswith("/index/by-status")


def test_a_hot_gsi_key_holds_back_batch_items_and_updates(env: Any) -> None:
    client, database, _ = env
    gsi_table(client, "orders")
    bulk_put_status(database, "orders", ["active"] * 1000)
    puts = [{"PutRequest": {"Item": {"pk": {"S": f"b{i}"}, "status": {"S": status}}}}
            for i, status in enumerate(("active", "closed", "active"))]
    response = client.batch_write_item(RequestItems={"orders": puts})
    assert response["UnprocessedItems"]["orders"] == [puts[0], puts[2]]  # the hot GSI key's items
    # UpdateItem finds the GSI key in the stored item: item-0 is in the hot GSI partition.
    error = error_of(lambda: client.update_item(
        TableName="orders", Key={"pk": {"S": "item-0"}}, UpdateExpression="SET n = :n",
        ExpressionAttributeValues={":n": {"N": "1"}}))
    assert error["Code"] == "ProvisionedThroughputExceededException"
    try:
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": "orders", "Item": {"pk": {"S": "t1"}, "status": {"S": "active"}}}}])
    except client.exceptions.TransactionCanceledException as cancelled:
        assert cancelled.response["CancellationReasons"][0]["Code"] == "ProvisionedThroughputExceeded"
    else:
        pytest.fail("a transaction onto a hot GSI key was not cancelled")
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    pkt = metrics["Tables"]["orders"]["ContributorInsights"]["Indexes"]["by-status"]["Rules"]["PKT"]["60m"]
    assert pkt == [{"Key": {"status": {"S": "active"}}, "ThrottleEvents": 4.0}]


def test_an_update_that_creates_an_item_charges_its_gsi_partition(env: Any) -> None:
    client, database, _ = env
    gsi_table(client, "orders")
    for i in range(3):
        client.update_item(TableName="orders", Key={"pk": {"S": f"new-{i}"}}, UpdateExpression="SET #s = :s",
                           ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": {"S": "open"}})
    _, metrics = handle_admin_metrics(database, "GET", "/_dynastore/metrics", None)
    index = metrics["Tables"]["orders"]["Indexes"]["by-status"]
    assert [partition["WriteUnits"] for partition in index["Partitions"]] == [3.0]
    pkc = metrics["Tables"]["orders"]["ContributorInsights"]["Indexes"]["by-status"]["Rules"]["PKC"]["60m"]
    assert pkc == [{"Key": {"status": {"S": "open"}}, "ConsumedUnits": 3.0}]

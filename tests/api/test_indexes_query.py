"""Query and Scan with IndexName: key conditions on index keys (incl.
multi-attribute GSI keys), projections, Select, ConsistentRead, pagination,
parallel Scan, sparse indexes and the single-table patterns."""

from __future__ import annotations

import time
import urllib.request
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def definitions(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "AttributeType": kind} for name, kind in pairs]


def key(*elements: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "KeyType": kind} for name, kind in elements]


def index(name: str, *elements: tuple[str, str], projection: str = "ALL", **extra: Any) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": key(*elements),
        "Projection": {"ProjectionType": projection, **extra},
    }


def S(text: str) -> dict[str, str]:  # noqa: N802 - DynamoDB's type letter
    return {"S": text}


def N(number: int) -> dict[str, str]:  # noqa: N802
    return {"N": str(number)}


@pytest.fixture
def orders(client: Any, make_table: Any) -> str:
    """Customers' orders: LSI by date (KEYS_ONLY) and by amount (ALL); GSIs by
    status (INCLUDE amount, sparse: only open orders have ``open_status``) and
    by product (KEYS_ONLY)."""
    name = make_table(
        AttributeDefinitions=definitions(
            ("pk", "S"), ("sk", "S"), ("date", "S"), ("amount", "N"), ("open_status", "S"), ("product", "S")
        ),
        LocalSecondaryIndexes=[
            index("by-date", ("pk", "HASH"), ("date", "RANGE"), projection="KEYS_ONLY"),
            index("by-amount", ("pk", "HASH"), ("amount", "RANGE")),
        ],
        GlobalSecondaryIndexes=[
            index("open", ("open_status", "HASH"), ("date", "RANGE"), projection="INCLUDE",
                  NonKeyAttributes=["amount"]),
            index("by-product", ("product", "HASH"), projection="KEYS_ONLY"),
        ],
    )
    for number in range(10):
        item = {
            "pk": S("cust#1"),
            "sk": S(f"order#{number:02}"),
            "date": S(f"2026-01-{30 - number:02}"),
            "amount": N(number * 10),
            "product": S(f"p{number % 3}"),
            "note": S("n" * 10),
        }
        if number % 2 == 0:
            item["open_status"] = S("OPEN")
        client.put_item(TableName=name, Item=item)
    client.put_item(TableName=name, Item={"pk": S("cust#2"), "sk": S("order#00"), "amount": N(5)})
    return name


def query(client: Any, table: str, **arguments: Any) -> dict[str, Any]:
    result: dict[str, Any] = client.query(TableName=table, **arguments)
    return result


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


# --- LSI -------------------------------------------------------------------------------


def test_lsi_orders_by_its_sort_key(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-date", KeyConditionExpression="pk = :p",
                   ExpressionAttributeValues={":p": S("cust#1")})
    dates = [item["date"]["S"] for item in result["Items"]]
    assert dates == sorted(dates) and len(dates) == 10
    # KEYS_ONLY: table key + index key, nothing else
    assert set(result["Items"][0]) == {"pk", "sk", "date"}


def test_lsi_range_conditions(client: Any, orders: str) -> None:
    def amounts(condition: str, **values: Any) -> list[int]:
        result = query(client, orders, IndexName="by-amount",
                       KeyConditionExpression=f"pk = :p AND {condition}",
                       ExpressionAttributeValues={":p": S("cust#1"), **values})
        return [int(item["amount"]["N"]) for item in result["Items"]]

    assert amounts("amount = :t", **{":t": N(30)}) == [30]
    assert amounts("amount < :t", **{":t": N(30)}) == [0, 10, 20]
    assert amounts("amount <= :t", **{":t": N(30)}) == [0, 10, 20, 30]
    assert amounts("amount > :t", **{":t": N(70)}) == [80, 90]
    assert amounts("amount >= :t", **{":t": N(70)}) == [70, 80, 90]
    assert amounts("amount BETWEEN :a AND :b", **{":a": N(20), ":b": N(40)}) == [20, 30, 40]


def test_lsi_begins_with_and_descending(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-date", ScanIndexForward=False,
                   KeyConditionExpression="pk = :p AND begins_with(#d, :prefix)",
                   ExpressionAttributeNames={"#d": "date"},
                   ExpressionAttributeValues={":p": S("cust#1"), ":prefix": S("2026-01-2")})
    dates = [item["date"]["S"] for item in result["Items"]]
    assert dates == sorted(dates, reverse=True)
    assert all(date.startswith("2026-01-2") for date in dates) and len(dates) == 9


def test_lsi_all_attributes_fetches_from_table(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-date", Select="ALL_ATTRIBUTES",
                   KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("cust#1")},
                   ReturnConsumedCapacity="INDEXES", Limit=3)
    assert [set(item) >= {"note", "amount", "product"} for item in result["Items"]] == [True] * 3
    capacity = result["ConsumedCapacity"]
    assert capacity["Table"]["CapacityUnits"] > 0  # the fetch is charged to the table
    assert capacity["LocalSecondaryIndexes"]["by-date"]["CapacityUnits"] > 0


def test_lsi_projection_of_unprojected_attribute_fetches(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-date", ProjectionExpression="sk, note",
                   KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("cust#1")})
    assert all(item["note"] == S("n" * 10) for item in result["Items"])


def test_lsi_consistent_read_is_honoured(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-date", ConsistentRead=True,
                   KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("cust#1")},
                   ReturnConsumedCapacity="TOTAL")
    assert result["Count"] == 10
    assert result["ConsumedCapacity"]["CapacityUnits"] == 1.0


def test_lsi_pagination_returns_index_key(client: Any, orders: str) -> None:
    seen: list[str] = []
    arguments: dict[str, Any] = {
        "IndexName": "by-amount", "Limit": 3, "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("cust#1")},
    }
    while True:
        page = query(client, orders, **arguments)
        seen += [item["sk"]["S"] for item in page["Items"]]
        last = page.get("LastEvaluatedKey")
        if last is None:
            break
        assert set(last) == {"pk", "sk", "amount"}
        arguments["ExclusiveStartKey"] = last
    assert seen == [f"order#{number:02}" for number in range(10)]


# --- GSI -------------------------------------------------------------------------------


def test_sparse_gsi_lists_only_open_orders(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="open", KeyConditionExpression="open_status = :o",
                   ExpressionAttributeValues={":o": S("OPEN")})
    assert result["Count"] == 5
    assert {item["sk"]["S"] for item in result["Items"]} == {f"order#{n:02}" for n in (0, 2, 4, 6, 8)}
    # INCLUDE amount: keys + index keys + amount, never note
    assert set(result["Items"][0]) == {"pk", "sk", "open_status", "date", "amount"}
    scanned = client.scan(TableName=orders, IndexName="open")
    assert scanned["Count"] == 5


def test_gsi_entry_follows_updates_and_deletes(client: Any, orders: str) -> None:
    item_key = {"pk": S("cust#1"), "sk": S("order#00")}
    client.update_item(TableName=orders, Key=item_key, UpdateExpression="REMOVE open_status")
    client.update_item(TableName=orders, Key={"pk": S("cust#1"), "sk": S("order#01")},
                       UpdateExpression="SET open_status = :o", ExpressionAttributeValues={":o": S("OPEN")})
    client.delete_item(TableName=orders, Key={"pk": S("cust#1"), "sk": S("order#02")})
    result = query(client, orders, IndexName="open", KeyConditionExpression="open_status = :o",
                   ExpressionAttributeValues={":o": S("OPEN")})
    assert {item["sk"]["S"] for item in result["Items"]} == {f"order#{n:02}" for n in (1, 4, 6, 8)}


def test_gsi_projected_attribute_update_is_visible(client: Any, orders: str) -> None:
    client.update_item(TableName=orders, Key={"pk": S("cust#1"), "sk": S("order#04")},
                       UpdateExpression="SET #t = :t", ExpressionAttributeNames={"#t": "amount"},
                       ExpressionAttributeValues={":t": N(999)})
    result = query(client, orders, IndexName="open", KeyConditionExpression="open_status = :o",
                   FilterExpression="#t = :t", ExpressionAttributeNames={"#t": "amount"},
                   ExpressionAttributeValues={":o": S("OPEN"), ":t": N(999)})
    assert [item["sk"]["S"] for item in result["Items"]] == ["order#04"]


def test_gsi_all_attributes_is_refused_without_all_projection(client: Any, orders: str) -> None:
    code, message = refused(client.query, TableName=orders, IndexName="open", Select="ALL_ATTRIBUTES",
                            KeyConditionExpression="open_status = :o",
                            ExpressionAttributeValues={":o": S("OPEN")})
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for "
        "global secondary index open because its projection type is not ALL",
    )
    code, message = refused(client.scan, TableName=orders, IndexName="by-product", Select="ALL_ATTRIBUTES")
    assert "Select type ALL_ATTRIBUTES is not supported for global secondary index by-product" in message


def test_gsi_unprojected_attribute_is_simply_absent(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-product", ProjectionExpression="sk, note",
                   KeyConditionExpression="product = :p", ExpressionAttributeValues={":p": S("p0")})
    assert result["Count"] == 4
    assert all(set(item) == {"sk"} for item in result["Items"])


def test_all_projected_attributes_select(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="by-product", Select="ALL_PROJECTED_ATTRIBUTES",
                   KeyConditionExpression="product = :p", ExpressionAttributeValues={":p": S("p1")})
    assert all(set(item) == {"pk", "sk", "product"} for item in result["Items"])
    counted = query(client, orders, IndexName="by-product", Select="COUNT",
                    KeyConditionExpression="product = :p", ExpressionAttributeValues={":p": S("p1")})
    assert counted["Count"] == 3 and "Items" not in counted


def test_consistent_read_on_gsi_is_refused(client: Any, orders: str) -> None:
    for call, extra in (
        (client.query, {"KeyConditionExpression": "product = :p",
                        "ExpressionAttributeValues": {":p": S("p1")}}),
        (client.scan, {}),
    ):
        code, message = refused(call, TableName=orders, IndexName="by-product", ConsistentRead=True, **extra)
        assert (code, message) == (
            "ValidationException", "Consistent reads are not supported on global secondary indexes"
        )


def test_unknown_index_is_refused(client: Any, orders: str) -> None:
    code, message = refused(client.query, TableName=orders, IndexName="nope",
                            KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("a")})
    assert (code, message) == ("ValidationException", "The table does not have the specified index: nope")
    code, message = refused(client.scan, TableName=orders, IndexName="nope")
    assert (code, message) == ("ValidationException", "The table does not have the specified index: nope")


def test_key_condition_must_use_index_keys(client: Any, orders: str) -> None:
    code, message = refused(client.query, TableName=orders, IndexName="open",
                            KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("a")})
    assert (code, message) == ("ValidationException", "Query condition missed key schema element: open_status")
    code, message = refused(client.query, TableName=orders, IndexName="by-amount",
                            KeyConditionExpression="pk = :p AND amount = :t",
                            ExpressionAttributeValues={":p": S("a"), ":t": S("x")})
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: Condition parameter type does not match schema type",
    )


def test_legacy_key_conditions_on_index(client: Any, orders: str) -> None:
    result = client.query(TableName=orders, IndexName="by-amount", KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [S("cust#1")]},
        "amount": {"ComparisonOperator": "GE", "AttributeValueList": [N(80)]},
    })
    assert [item["amount"]["N"] for item in result["Items"]] == ["80", "90"]


def test_gsi_pagination_and_start_key_shape(client: Any, orders: str) -> None:
    page = query(client, orders, IndexName="open", Limit=2, KeyConditionExpression="open_status = :o",
                 ExpressionAttributeValues={":o": S("OPEN")})
    last = page["LastEvaluatedKey"]
    assert set(last) == {"pk", "sk", "open_status", "date"}
    rest = query(client, orders, IndexName="open", ExclusiveStartKey=last,
                 KeyConditionExpression="open_status = :o", ExpressionAttributeValues={":o": S("OPEN")})
    assert page["Count"] + rest["Count"] == 5
    del last["date"]
    code, message = refused(client.query, TableName=orders, IndexName="open", ExclusiveStartKey=last,
                            KeyConditionExpression="open_status = :o",
                            ExpressionAttributeValues={":o": S("OPEN")})
    assert (code, message) == ("ValidationException", "The provided starting key is invalid")


def test_gsi_read_capacity_is_reported_per_index(client: Any, orders: str) -> None:
    result = query(client, orders, IndexName="open", KeyConditionExpression="open_status = :o",
                   ExpressionAttributeValues={":o": S("OPEN")}, ReturnConsumedCapacity="INDEXES")
    capacity = result["ConsumedCapacity"]
    assert capacity["GlobalSecondaryIndexes"]["open"]["CapacityUnits"] == 0.5
    assert capacity["Table"]["CapacityUnits"] == 0.0
    assert capacity["CapacityUnits"] == 0.5


def test_parallel_scan_over_index_covers_it_once(client: Any, orders: str) -> None:
    keys: list[str] = []
    for segment in range(4):
        arguments: dict[str, Any] = {"IndexName": "by-amount", "Segment": segment, "TotalSegments": 4, "Limit": 2}
        while True:
            page = client.scan(TableName=orders, **arguments)
            keys += [item["pk"]["S"] + item["sk"]["S"] for item in page["Items"]]
            if "LastEvaluatedKey" not in page:
                break
            arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 11


# --- multi-attribute GSI keys ------------------------------------------------------------


MESSAGE_HASH_EQUALITY = (
    "Query key condition not supported: All HASH key attributes of the index must be "
    "specified with equality conditions"
)
MESSAGE_RANGE_ORDER = (
    "Query key condition not supported: RANGE key attributes of the index must be used "
    "left to right, with equality conditions on all but the last"
)


@pytest.fixture
def tournament(client: Any, make_table: Any) -> str:
    name = make_table(
        AttributeDefinitions=definitions(
            ("pk", "S"), ("sk", "S"), ("area", "S"), ("tier", "N"), ("score", "N"), ("player", "S")
        ),
        GlobalSecondaryIndexes=[
            index("ranking", ("area", "HASH"), ("tier", "HASH"), ("score", "RANGE"), ("player", "RANGE"))
        ],
    )
    rows = [("eu", 1, 50, "ann"), ("eu", 1, 70, "bob"), ("eu", 1, 70, "cid"), ("eu", 2, 10, "dan"),
            ("us", 1, 60, "eve"), ("eu", 1, 90, "fay")]
    for number, (zone, tier, score, player) in enumerate(rows):
        client.put_item(TableName=name, Item={
            "pk": S(f"m{number}"), "sk": S("x"), "area": S(zone), "tier": N(tier),
            "score": N(score), "player": S(player),
        })
    client.put_item(TableName=name, Item={"pk": S("no-tier"), "sk": S("x"), "area": S("eu")})
    return name


def ranking(client: Any, table: str, condition: str, **values: Any) -> list[str]:
    result = client.query(TableName=table, IndexName="ranking", KeyConditionExpression=condition,
                          ExpressionAttributeValues=values)
    return [item["player"]["S"] for item in result["Items"]]


def test_multi_attribute_partition_needs_every_attribute(client: Any, tournament: str) -> None:
    assert ranking(client, tournament, "area = :r AND tier = :t", **{":r": S("eu"), ":t": N(1)}) == [
        "ann", "bob", "cid", "fay"
    ]
    code, message = refused(client.query, TableName=tournament, IndexName="ranking",
                            KeyConditionExpression="area = :r", ExpressionAttributeValues={":r": S("eu")})
    assert (code, message) == ("ValidationException", MESSAGE_HASH_EQUALITY)


def test_multi_attribute_sort_conditions_left_to_right(client: Any, tournament: str) -> None:
    base = {":r": S("eu"), ":t": N(1)}
    assert ranking(client, tournament, "area = :r AND tier = :t AND score = :s",
                   **base, **{":s": N(70)}) == ["bob", "cid"]
    assert ranking(client, tournament, "area = :r AND tier = :t AND score >= :s",
                   **base, **{":s": N(70)}) == ["bob", "cid", "fay"]
    assert ranking(client, tournament, "area = :r AND tier = :t AND score = :s AND player > :p",
                   **base, **{":s": N(70), ":p": S("bob")}) == ["cid"]
    assert ranking(client, tournament, "area = :r AND tier = :t AND score BETWEEN :a AND :b",
                   **base, **{":a": N(50), ":b": N(70)}) == ["ann", "bob", "cid"]
    code, message = refused(client.query, TableName=tournament, IndexName="ranking",
                            KeyConditionExpression="area = :r AND tier = :t AND player = :p",
                            ExpressionAttributeValues={**base, ":p": S("bob")})
    assert (code, message) == ("ValidationException", MESSAGE_RANGE_ORDER)


def test_multi_attribute_key_pagination(client: Any, tournament: str) -> None:
    arguments: dict[str, Any] = {
        "IndexName": "ranking", "Limit": 1, "KeyConditionExpression": "area = :r AND tier = :t",
        "ExpressionAttributeValues": {":r": S("eu"), ":t": N(1)},
    }
    players = []
    while True:
        page = client.query(TableName=tournament, **arguments)
        players += [item["player"]["S"] for item in page["Items"]]
        if "LastEvaluatedKey" not in page:
            break
        assert set(page["LastEvaluatedKey"]) == {"pk", "sk", "area", "tier", "score", "player"}
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    assert players == ["ann", "bob", "cid", "fay"]


# --- single-table pattern: adjacency list + inverted GSI ----------------------------------


def test_adjacency_list_with_inverted_gsi(client: Any, make_table: Any) -> None:
    name = make_table(
        AttributeDefinitions=definitions(("pk", "S"), ("sk", "S")),
        GlobalSecondaryIndexes=[index("inverted", ("sk", "HASH"), ("pk", "RANGE"))],
    )
    edges = [("user#1", "group#a"), ("user#2", "group#a"), ("user#1", "group#b"), ("user#3", "group#b")]
    with_items = [{"PutRequest": {"Item": {"pk": S(user), "sk": S(group)}}} for user, group in edges]
    client.batch_write_item(RequestItems={name: with_items})
    members = client.query(TableName=name, IndexName="inverted", KeyConditionExpression="sk = :g",
                           ExpressionAttributeValues={":g": S("group#a")})
    assert [item["pk"]["S"] for item in members["Items"]] == ["user#1", "user#2"]
    groups = client.query(TableName=name, KeyConditionExpression="pk = :u",
                          ExpressionAttributeValues={":u": S("user#1")})
    assert [item["sk"]["S"] for item in groups["Items"]] == ["group#a", "group#b"]


# --- GSI eventual consistency made visible (DYNASTORE_GSI_LAG_MS / --gsi-lag-ms) -----------


@pytest.fixture(scope="module")
def lagging_client() -> Any:
    from tests.api.conftest import make_client, start_server, stop_server

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DYNASTORE_GSI_LAG_MS", "400")
        process, url = start_server("--in-memory")
    try:
        yield make_client(url)
    finally:
        stop_server(process)


def test_gsi_lag_makes_read_after_write_miss(lagging_client: Any) -> None:
    client = lagging_client
    client.create_table(
        TableName="lagging",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=key(("pk", "HASH"), ("sk", "RANGE")),
        AttributeDefinitions=definitions(("pk", "S"), ("sk", "S"), ("g", "S"), ("l", "S")),
        GlobalSecondaryIndexes=[index("by-g", ("g", "HASH"))],
        LocalSecondaryIndexes=[index("by-l", ("pk", "HASH"), ("l", "RANGE"))],
    )

    def by_g(value: str) -> list[str]:
        result = client.query(TableName="lagging", IndexName="by-g", KeyConditionExpression="g = :g",
                              ExpressionAttributeValues={":g": S(value)})
        return [item["sk"]["S"] for item in result["Items"]]

    client.put_item(TableName="lagging", Item={"pk": S("a"), "sk": S("1"), "g": S("x"), "l": S("1")})
    assert by_g("x") == []  # the GSI has not caught up yet
    lsi = client.query(TableName="lagging", IndexName="by-l", KeyConditionExpression="pk = :p",
                       ExpressionAttributeValues={":p": S("a")})
    assert lsi["Count"] == 1  # LSIs stay synchronous, as in DynamoDB
    time.sleep(0.5)
    assert by_g("x") == ["1"]
    client.update_item(TableName="lagging", Key={"pk": S("a"), "sk": S("1")},
                       UpdateExpression="SET g = :g", ExpressionAttributeValues={":g": S("y")})
    client.put_item(TableName="lagging", Item={"pk": S("a"), "sk": S("2"), "g": S("y")})
    client.delete_item(TableName="lagging", Key={"pk": S("a"), "sk": S("2")})
    assert by_g("x") == ["1"] and by_g("y") == []  # stale, as DynamoDB may be
    time.sleep(0.5)
    assert by_g("x") == [] and by_g("y") == ["1"]  # never lost, never pointing at a deleted item


def test_start_key_outside_the_index_query(client: Any, orders: str) -> None:
    start = {"pk": S("cust#1"), "sk": S("order#01"), "amount": N(10)}
    code, message = refused(client.query, TableName=orders, IndexName="by-amount", ExclusiveStartKey=start,
                            KeyConditionExpression="pk = :p AND amount > :t",
                            ExpressionAttributeValues={":p": S("cust#1"), ":t": N(50)})
    assert (code, message) == ("ValidationException", "The provided starting key does not match the range key predicate")
    other = {"pk": S("cust#2"), "sk": S("order#00"), "amount": N(5)}
    code, message = refused(client.query, TableName=orders, IndexName="by-amount", ExclusiveStartKey=other,
                            KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("cust#1")})
    assert (code, message) == (
        "ValidationException", "The provided starting key is outside query boundaries based on provided conditions"
    )


def test_gsi_writes_waiting_out_the_lag_survive_kill_9(tmp_path: Any) -> None:
    """Pending GSI writes are in the durable outbox: after kill -9 and a
    restart they still reach the index (issue 3: an entry is never lost)."""
    import signal

    from tests.api.conftest import make_client, start_server, stop_server

    data_dir = str(tmp_path / "data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DYNASTORE_GSI_LAG_MS", "600000")  # ten minutes: nothing applies before the kill
        process, url = start_server("--data-dir", data_dir)
    try:
        client = make_client(url)
        client.create_table(
            TableName="outbox", BillingMode="PAY_PER_REQUEST",
            KeySchema=key(("pk", "HASH")),
            AttributeDefinitions=definitions(("pk", "S"), ("g", "S")),
            GlobalSecondaryIndexes=[index("by-g", ("g", "HASH"))],
        )
        for number in range(20):
            client.put_item(TableName="outbox", Item={"pk": S(f"item{number}"), "g": S("shared")})
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        stop_server(process)
    process, url = start_server("--data-dir", data_dir)
    try:
        client = make_client(url)
        request = urllib.request.Request(url + "/_dynastore/clock", data=b'{"advance_seconds": 601}',
                                         method="POST", headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).read()
        found = client.query(TableName="outbox", IndexName="by-g", KeyConditionExpression="g = :g",
                             ExpressionAttributeValues={":g": S("shared")})
        assert sorted(item["pk"]["S"] for item in found["Items"]) == sorted(f"item{n}" for n in range(20))
    finally:
        stop_server(process)

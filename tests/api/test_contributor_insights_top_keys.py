"""Contributor Insights figures (issue 7): the most accessed and most
throttled keys -- partition key and partition+sort key, per table and per
index, over recent windows -- in GET /_dynastore/metrics and its Prometheus
text. Black-box over both transports; time moves through the admin clock
(POST /_dynastore/clock), nothing sleeps. Assertions use the 60-minute window
unless the test moved the clock, so a wall-clock minute boundary between two
calls cannot change the answer."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest


def admin(endpoint: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(endpoint + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def metrics(endpoint: str, table: str) -> dict[str, Any]:
    status, body = admin(endpoint, "GET", "/_dynastore/metrics")
    assert status == 200, body
    return dict(json.loads(body)["Tables"][table])


@pytest.fixture
def observed(endpoint: str) -> Iterator[Any]:
    """``observed(table, mode="observe")`` puts the throughput model on one
    table; the model is switched off again after the test."""

    def observe(table: str, mode: str = "observe") -> None:
        status, body = admin(endpoint, "POST", "/_dynastore/throughput", {"Mode": mode, "TableName": table})
        assert status == 200, body

    yield observe
    admin(endpoint, "POST", "/_dynastore/throughput", {"Mode": "off"})


def indexed_table(make_table: Any) -> str:
    return str(make_table(
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g", "gs", "l")],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "gs", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
        LocalSecondaryIndexes=[{
            "IndexName": "by-l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    ))


def s(value: str) -> dict[str, str]:
    return {"S": value}


@pytest.mark.one_server  # the counters (rules) are the server's own
def test_top_keys_by_partition_and_sort_key_per_table_and_index(
    client: Any, make_table: Any, endpoint: str, observed: Any
) -> None:
    table = indexed_table(make_table)
    observed(table)
    for _ in range(3):
        client.put_item(TableName=table, Item={"pk": s("p1"), "sk": s("s1")})  # 1 WCU each
    client.put_item(TableName=table, Item={"pk": s("p2"), "sk": s("s1"), "g": s("G1"), "gs": s("x")})
    client.put_item(TableName=table, Item={"pk": s("p3"), "sk": s("s1"), "l": s("L")})  # table 1 + LSI 1
    client.get_item(TableName=table, Key={"pk": s("p1"), "sk": s("s1")}, ConsistentRead=True)  # 1 RCU
    client.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                 ExpressionAttributeValues={":g": s("G1")})  # 0.5 RCU on the GSI
    insights = metrics(endpoint, table)["ContributorInsights"]
    assert insights["Windows"] == ["1m", "5m", "60m"]
    rules = insights["Table"]["Rules"]
    assert rules["PKC"]["60m"] == [
        {"Key": {"pk": s("p1")}, "ConsumedUnits": 4.0},
        {"Key": {"pk": s("p3")}, "ConsumedUnits": 2.0},
        {"Key": {"pk": s("p2")}, "ConsumedUnits": 1.0},
    ]
    assert rules["SKC"]["60m"][0] == {"Key": {"pk": s("p1"), "sk": s("s1")}, "ConsumedUnits": 4.0}
    assert rules["PKT"]["60m"] == [] and rules["SKT"]["60m"] == []
    gsi = insights["Indexes"]["by-g"]
    assert gsi["IndexType"] == "GSI"
    assert gsi["Rules"]["PKC"]["60m"] == [{"Key": {"g": s("G1")}, "ConsumedUnits": 1.5}]
    assert gsi["Rules"]["SKC"]["60m"] == [{"Key": {"g": s("G1"), "gs": s("x")}, "ConsumedUnits": 1.0}]
    lsi = insights["Indexes"]["by-l"]
    assert lsi["IndexType"] == "LSI"
    assert lsi["Rules"]["PKC"]["60m"] == [{"Key": {"pk": s("p3")}, "ConsumedUnits": 1.0}]
    assert lsi["Rules"]["SKC"]["60m"] == [{"Key": {"pk": s("p3"), "l": s("L")}, "ConsumedUnits": 1.0}]


@pytest.mark.one_server  # the counters (rules) are the server's own
def test_dynamodb_rules_follow_the_contributor_insights_setting(
    client: Any, make_table: Any, endpoint: str, observed: Any
) -> None:
    table = indexed_table(make_table)
    observed(table)
    client.put_item(TableName=table, Item={"pk": s("p"), "sk": s("s")})
    before = metrics(endpoint, table)["ContributorInsights"]
    assert before["Table"]["ContributorInsightsStatus"] == "DISABLED"
    assert before["Table"]["DynamoDBRules"] == []
    assert before["Table"]["Rules"]["PKC"]["60m"]  # dynastore counts whatever the setting
    client.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE",
                                       ContributorInsightsMode="THROTTLED_KEYS")
    client.update_contributor_insights(TableName=table, IndexName="by-g", ContributorInsightsAction="ENABLE")
    after = metrics(endpoint, table)["ContributorInsights"]
    assert after["Table"]["ContributorInsightsMode"] == "THROTTLED_KEYS"
    assert after["Table"]["DynamoDBRules"] == ["PKT", "SKT"]
    assert after["Indexes"]["by-g"]["DynamoDBRules"] == ["PKC", "PKT", "SKC", "SKT"]
    assert after["Indexes"]["by-l"]["DynamoDBRules"] == []  # DynamoDB has no rules for LSIs


def test_most_throttled_keys_count_throttle_events(
    client: Any, make_table: Any, endpoint: str, observed: Any
) -> None:
    table = make_table(BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    observed(table, "enforce")
    throttled = 0
    for _ in range(400):  # past the burst the bucket saved since the table was created
        try:
            client.put_item(TableName=table, Item={"pk": s("hot"), "sk": s("counter")})
        except client.exceptions.ProvisionedThroughputExceededException:
            throttled += 1
            if throttled == 2:
                break
    assert throttled == 2
    rules = metrics(endpoint, table)["ContributorInsights"]["Table"]["Rules"]
    assert rules["PKT"]["60m"] == [{"Key": {"pk": s("hot")}, "ThrottleEvents": 2.0}]
    assert rules["SKT"]["60m"] == [{"Key": {"pk": s("hot"), "sk": s("counter")}, "ThrottleEvents": 2.0}]


@pytest.mark.one_server  # the counters (rules) are the server's own
def test_keys_leave_the_windows_as_the_clock_moves(
    client: Any, make_table: Any, endpoint: str, observed: Any
) -> None:
    table = make_table()
    observed(table)
    client.put_item(TableName=table, Item={"pk": s("old"), "sk": s("1")})
    assert metrics(endpoint, table)["ContributorInsights"]["Table"]["Rules"]["PKC"]["5m"]
    status, body = admin(endpoint, "POST", "/_dynastore/clock", {"advance_seconds": 6 * 60})
    assert status == 200, body
    rules = metrics(endpoint, table)["ContributorInsights"]["Table"]["Rules"]
    assert rules["PKC"]["5m"] == [] and rules["SKC"]["5m"] == [] and rules["PKC"]["1m"] == []
    assert rules["PKC"]["60m"] == [{"Key": {"pk": s("old")}, "ConsumedUnits": 1.0}]  # still within the hour
    client.put_item(TableName=table, Item={"pk": s("new"), "sk": s("1")})
    client.put_item(TableName=table, Item={"pk": s("new"), "sk": s("1")})
    rules = metrics(endpoint, table)["ContributorInsights"]["Table"]["Rules"]
    assert rules["PKC"]["5m"] == [{"Key": {"pk": s("new")}, "ConsumedUnits": 2.0}]
    assert rules["PKC"]["60m"] == [{"Key": {"pk": s("new")}, "ConsumedUnits": 2.0},
                                   {"Key": {"pk": s("old")}, "ConsumedUnits": 1.0}]


@pytest.mark.one_server  # the counters (rules) are the server's own
def test_prometheus_text_has_the_top_keys_and_bounds_them(
    client: Any, make_table: Any, endpoint: str, observed: Any
) -> None:
    table = indexed_table(make_table)
    observed(table)
    for i in range(8):
        for _ in range(i + 1):
            client.put_item(TableName=table, Item={"pk": s(f"k{i}"), "sk": s("a"), "g": s("G"), "gs": s("x")})
    status, body = admin(endpoint, "GET", "/_dynastore/metrics?format=prometheus")
    assert status == 200
    text = body.decode()
    hottest = '{\\"pk\\":{\\"S\\":\\"k7\\"},\\"sk\\":{\\"S\\":\\"a\\"}}'
    assert (f'dynastore_top_key_consumed_units{{table="{table}",index="",rule="SKC",window="60m",'
            f'key="{hottest}"}} 8') in text
    assert (f'dynastore_top_key_consumed_units{{table="{table}",index="by-g",rule="PKC",window="60m",'
            'key="{\\"g\\":{\\"S\\":\\"G\\"}}"} 8') in text  # an unchanged entry is not rewritten
    table_pkc = [line for line in text.splitlines()
                 if line.startswith(f'dynastore_top_key_consumed_units{{table="{table}",index="",rule="PKC",'
                                    'window="60m"')]
    assert len(table_pkc) == 5  # 8 keys seen, the top 5 exported
    assert f'dynastore_partitions{{table="{table}",index="by-g"}}' in text

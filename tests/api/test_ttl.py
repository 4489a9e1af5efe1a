"""Time to Live: UpdateTimeToLive / DescribeTimeToLive through the real server,
and expiry by the sweeper driven by the movable clock (embedded database)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

import dynastore
from dynastore.admin_time import handle_admin_time
from dynastore.clock import advance_clock
from dynastore.workers.ttl_sweeper import sweep, sweep_all
from tests.api.helpers import error_of

FIVE_YEARS = 5 * 365 * 24 * 3600


def enable(client: Any, name: str, attribute: str = "expires") -> dict[str, Any]:
    return dict(client.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute}))


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


# --- the API, through the real server -------------------------------------------------


def test_a_new_table_has_ttl_disabled(client: Any, make_table: Any) -> None:
    name = make_table()
    described = client.describe_time_to_live(TableName=name)
    assert described["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}


def test_enable_echoes_the_specification_and_describes_enabled(client: Any, make_table: Any) -> None:
    name = make_table()
    answer = enable(client, name)
    assert answer["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "expires"}
    described = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert described == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}


def test_enabling_twice_is_refused(client: Any, make_table: Any) -> None:
    name = make_table()
    enable(client, name)
    assert refused(client.update_time_to_live, TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires"}) == ("ValidationException", "TimeToLive is already enabled")


def test_another_attribute_while_enabled_is_refused(client: Any, make_table: Any) -> None:
    name = make_table()
    enable(client, name)
    for enabled in (True, False):
        assert refused(client.update_time_to_live, TableName=name, TimeToLiveSpecification={
            "Enabled": enabled, "AttributeName": "other"}) == (
            "ValidationException",
            "TimeToLive is active on a different AttributeName: current AttributeName is expires",
        )


def test_disabling_a_disabled_table_is_refused(client: Any, make_table: Any) -> None:
    name = make_table()
    assert refused(client.update_time_to_live, TableName=name, TimeToLiveSpecification={
        "Enabled": False, "AttributeName": "expires"}) == ("ValidationException", "TimeToLive is already disabled")


def test_a_second_change_within_the_cooldown_is_refused(client: Any, make_table: Any) -> None:
    name = make_table()
    enable(client, name)
    assert refused(client.update_time_to_live, TableName=name, TimeToLiveSpecification={
        "Enabled": False, "AttributeName": "expires"}) == (
        "ValidationException", "Time to live has been modified multiple times within a fixed interval"
    )
    # DescribeTimeToLive still shows the settled status.
    assert client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]["TimeToLiveStatus"] == "ENABLED"


def test_missing_table(client: Any, unique_name: Any) -> None:
    name = unique_name("missing")
    code, message = refused(client.describe_time_to_live, TableName=name)
    assert code == "ResourceNotFoundException"
    code, message = refused(client.update_time_to_live, TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires"})
    assert code == "ResourceNotFoundException"


def test_request_shape_is_validated(client: Any, make_table: Any) -> None:
    name = make_table()
    code, message = refused(client.update_time_to_live, TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": ""})
    assert code == "ValidationException"
    assert "at 'timeToLiveSpecification.attributeName' failed to satisfy constraint" in message
    code, message = refused(client.update_time_to_live, TableName=name)
    assert code == "ValidationException"
    assert "Value null at 'timeToLiveSpecification' failed to satisfy constraint" in message


def test_the_table_arn_names_the_table(client: Any, make_table: Any) -> None:
    name = make_table()
    arn = client.describe_table(TableName=name)["Table"]["TableArn"]
    enable(client, arn)
    assert client.describe_time_to_live(TableName=arn)["TimeToLiveDescription"]["AttributeName"] == "expires"


# --- expiry, with the movable clock ------------------------------------------------------


@pytest.fixture
def embedded() -> Iterator[Any]:
    with dynastore.open() as database:
        yield database


def ttl_table(embedded: Any, **extra: Any) -> Any:
    client = embedded.client()
    arguments: dict[str, Any] = {
        "TableName": "sessions",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    client.create_table(**{**arguments, **extra})
    enable(client, "sessions")
    return client


def keys(client: Any) -> set[str]:
    return {item["pk"]["S"] for item in client.scan(TableName="sessions")["Items"]}


def test_expired_items_stay_readable_until_swept(embedded: Any) -> None:
    client = ttl_table(embedded)
    now = int(embedded.database.now())
    client.put_item(TableName="sessions", Item={"pk": {"S": "soon"}, "expires": {"N": str(now + 60)}})
    client.put_item(TableName="sessions", Item={"pk": {"S": "later"}, "expires": {"N": str(now + 7200)}})
    advance_clock(embedded.database, 120)
    # Expired, but not yet swept: reads still return it (as in DynamoDB).
    assert client.get_item(TableName="sessions", Key={"pk": {"S": "soon"}})["Item"]
    assert sweep_all(embedded.database) == 1
    assert keys(client) == {"later"}
    advance_clock(embedded.database, 7200)
    assert sweep_all(embedded.database) == 1
    assert keys(client) == set()


def test_what_the_sweeper_leaves_alone(embedded: Any) -> None:
    client = ttl_table(embedded)
    now = int(embedded.database.now())
    items = {
        "string": {"S": str(now - 10)},
        "set": {"NS": [str(now - 10)]},
        "milliseconds": {"N": str((now - 10) * 1000)},  # far in the future as seconds
        "ancient": {"N": str(now - FIVE_YEARS - 86400)},
        "future": {"N": str(now + 3600)},
        "fraction": {"N": f"{now - 10}.5"},
    }
    for key, value in items.items():
        client.put_item(TableName="sessions", Item={"pk": {"S": key}, "expires": value})
    client.put_item(TableName="sessions", Item={"pk": {"S": "no-attribute"}})
    client.put_item(TableName="sessions", Item={"pk": {"S": "nested"}, "m": {"M": {"expires": {"N": "1"}}}})
    assert sweep_all(embedded.database) == 1
    assert keys(client) == set(items) - {"fraction"} | {"no-attribute", "nested"}


def test_sweeps_are_bounded_and_resume(embedded: Any) -> None:
    client = ttl_table(embedded)
    now = int(embedded.database.now())
    for index in range(50):
        client.put_item(TableName="sessions", Item={"pk": {"S": f"k{index}"}, "expires": {"N": str(now - 1)}})
    assert sweep(embedded.database, max_items=20) == 20
    assert len(keys(client)) == 30
    assert sweep(embedded.database, max_items=20) == 20
    assert sweep_all(embedded.database) == 10
    assert keys(client) == set()


def test_disabled_ttl_deletes_nothing(embedded: Any) -> None:
    client = ttl_table(embedded)
    now = int(embedded.database.now())
    client.put_item(TableName="sessions", Item={"pk": {"S": "a"}, "expires": {"N": str(now - 1)}})
    advance_clock(embedded.database, 3600)
    client.update_time_to_live(TableName="sessions", TimeToLiveSpecification={
        "Enabled": False, "AttributeName": "expires"})
    assert embedded.client().describe_time_to_live(TableName="sessions")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "DISABLED"}
    assert sweep_all(embedded.database) == 0
    assert keys(client) == {"a"}


def test_the_cooldown_passes_with_the_clock(embedded: Any) -> None:
    client = ttl_table(embedded)
    with pytest.raises(ClientError):
        client.update_time_to_live(TableName="sessions", TimeToLiveSpecification={
            "Enabled": False, "AttributeName": "expires"})
    advance_clock(embedded.database, 1900)
    client.update_time_to_live(TableName="sessions", TimeToLiveSpecification={
        "Enabled": False, "AttributeName": "expires"})


def test_sweeper_deletes_update_indexes(embedded: Any) -> None:
    client = ttl_table(
        embedded,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )
    now = int(embedded.database.now())
    client.put_item(TableName="sessions", Item={"pk": {"S": "a"}, "g": {"S": "x"}, "expires": {"N": str(now - 5)}})
    client.put_item(TableName="sessions", Item={"pk": {"S": "b"}, "g": {"S": "x"}})
    assert sweep_all(embedded.database) == 1
    found = client.query(TableName="sessions", IndexName="by-g", KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    assert [item["pk"]["S"] for item in found] == ["b"]


def test_admin_clock_and_sweep(embedded: Any) -> None:
    client = ttl_table(embedded)
    database = embedded.database
    status, before = handle_admin_time(database, "GET", "/_dynastore/clock", None)
    assert status == 200 and before["OffsetSeconds"] == 0
    client.put_item(TableName="sessions", Item={"pk": {"S": "a"},
                                                "expires": {"N": str(int(before["Now"]) + 30)}})
    status, moved = handle_admin_time(database, "POST", "/_dynastore/clock", b'{"advance_seconds": 60}')
    assert status == 200 and moved["OffsetSeconds"] == 60 and moved["Now"] >= before["Now"] + 60
    assert handle_admin_time(database, "POST", "/_dynastore/ttl/sweep", b"{}") == (200, {"Deleted": 1})
    assert handle_admin_time(database, "POST", "/_dynastore/clock", b'{"advance_seconds": -1}')[0] == 400
    assert handle_admin_time(database, "POST", "/_dynastore/clock", b"[]")[0] == 400
    assert handle_admin_time(database, "DELETE", "/_dynastore/clock", None)[0] == 405
    assert handle_admin_time(database, "GET", "/_dynastore/clocks", None)[0] == 404
    status, answer = handle_admin_time(database, "POST", "/_dynastore/clock",
                                       {"advance_seconds": 1, "sweep": True})
    assert status == 200 and answer["Deleted"] == 0

"""Pure control-plane rules (dynastore.engine: table_creation, table_updates,
table_description, table_arns, table_tags...) on a manual clock."""

from __future__ import annotations

import datetime
from dataclasses import asdict, replace
from typing import Any

import orjson
import pytest

from dynastore.engine import (
    table_arns,
    table_creation,
    table_description,
    table_settings,
    table_tags,
    table_updates,
    utc_calendar,
)
from dynastore.engine.schema import KeyAttribute, TableSchema
from dynastore.errors import LimitExceededException, ResourceNotFoundException, ValidationException

REGION = "us-east-1"
ACCOUNT = "123456789012"
ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/things"


def moment(text: str) -> float:
    """Epoch seconds of an ISO UTC time."""
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC).timestamp()


NOON = moment("2026-10-08T12:00:00")


def create_request(**extra: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "TableName": "things",
        "AttributeDefinitions": [
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "pk", "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 10},
    }
    request.update(extra)
    return request


def build(
    request: dict[str, Any], now: float = NOON, reserved: tuple[int, int] = (0, 0)
) -> TableSchema:
    return table_creation.build_table_schema(
        request, table_uuid="uuid", arn=ARN, region=REGION, now=now, reserved=reserved
    )


# --- CreateTable ----------------------------------------------------------------------


def test_build_provisioned_schema() -> None:
    schema = build(create_request(Tags=[{"Key": "a", "Value": "1"}]))
    assert schema.partition_key == KeyAttribute("pk", "S")
    assert schema.sort_key == KeyAttribute("sk", "N")
    assert [d.name for d in schema.attribute_definitions] == ["sk", "pk"]
    assert (schema.billing_mode, schema.read_capacity_units, schema.write_capacity_units) == (
        "PROVISIONED",
        10,
        10,
    )
    assert schema.billing_mode_last_update_time is None
    assert (schema.warm_read_units, schema.warm_write_units) == (10, 10)
    assert schema.tags == (("a", "1"),)
    assert schema.creation_time == NOON


def test_build_on_demand_schema() -> None:
    request = create_request(BillingMode="PAY_PER_REQUEST")
    del request["ProvisionedThroughput"]
    schema = build(request)
    assert schema.billing_mode == "PAY_PER_REQUEST"
    assert schema.billing_mode_last_update_time == NOON
    assert (schema.warm_read_units, schema.warm_write_units) == (12000, 4000)


def test_metadata_round_trip_keeps_every_field() -> None:
    schema = replace(
        build(
            create_request(TableClass="STANDARD_INFREQUENT_ACCESS", DeletionProtectionEnabled=True)
        ),
        table_id=7,
        last_decrease_time=NOON,
        decreases_today=2,
        on_demand_max_read_units=5,
    )
    assert TableSchema.from_metadata(schema.to_metadata()) == schema


def test_metadata_from_before_new_fields_loads_with_defaults() -> None:
    raw = asdict(build(create_request()))
    for newer in (
        "warm_read_units",
        "warm_write_units",
        "table_class_reported",
        "on_demand_max_read_units",
    ):
        del raw[newer]
    schema = TableSchema.from_metadata(orjson.dumps(raw))
    assert schema.warm_read_units == 0 and schema.table_class_reported is False


@pytest.mark.parametrize(
    ("reserved", "read", "message"),
    [
        ((0, 0), 40001, "The requested ReadCapacityUnits, 40001, is above the per table maximum"),
        (
            (79999, 0),
            2,
            "This request would have caused the ReadCapacityUnits limit to be exceeded for the "
            "account in us-east-1. Current ReadCapacityUnits reserved by the account: 79999. "
            "Limit: 80000. Requested: 2",
        ),
    ],
)
def test_capacity_quotas(reserved: tuple[int, int], read: int, message: str) -> None:
    request = create_request(
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": 1}
    )
    with pytest.raises(LimitExceededException) as excinfo:
        build(request, reserved=reserved)
    assert str(excinfo.value).startswith(message)


def test_account_quota_is_not_checked_for_on_demand() -> None:
    request = create_request(BillingMode="PAY_PER_REQUEST")
    del request["ProvisionedThroughput"]
    assert build(request, reserved=(80000, 80000)).billing_mode == "PAY_PER_REQUEST"


def test_reserved_capacity_counts_provisioned_tables_only() -> None:
    provisioned = build(create_request())
    other = replace(provisioned, name="other", read_capacity_units=3, write_capacity_units=4)
    on_demand = replace(provisioned, name="od", billing_mode="PAY_PER_REQUEST")
    assert table_settings.reserved_capacity([provisioned, other, on_demand]) == (13, 14)
    assert table_settings.reserved_capacity([provisioned, other], excluding="things") == (3, 4)


def test_three_element_key_schema() -> None:
    keys = [{"AttributeName": n, "KeyType": "RANGE"} for n in "abc"]
    with pytest.raises(ValidationException) as excinfo:
        build(create_request(KeySchema=keys))
    message = str(excinfo.value)
    assert message.startswith(
        "1 validation error detected: Value '[com.amazonaws.dynamodb.v20120810.KeySchemaElement@"
    )
    assert message.endswith("Member must have length less than or equal to 2")


# --- descriptions ---------------------------------------------------------------------


def test_created_description_leaves_out_later_members() -> None:
    request = create_request(BillingMode="PAY_PER_REQUEST")
    del request["ProvisionedThroughput"]
    description = table_description.created_table_description(build(request), request)
    assert description["TableStatus"] == "CREATING"
    assert description["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}
    assert "WarmThroughput" not in description


def test_deleted_description_is_reduced() -> None:
    description = table_description.deleted_table_description(
        build(create_request()), item_count=3, size_bytes=9, now=NOON
    )
    assert description["TableStatus"] == "DELETING"
    assert set(description) == {
        "TableName",
        "TableStatus",
        "ProvisionedThroughput",
        "TableSizeBytes",
        "ItemCount",
        "TableArn",
        "TableId",
        "DeletionProtectionEnabled",
    }


# --- the decrease budget ---------------------------------------------------------------


def decrease(schema: TableSchema, units: int, now: float) -> TableSchema:
    return table_updates.apply_provisioned_throughput(schema, units, units, now)


def test_four_decreases_then_one_per_hour() -> None:
    schema = build(create_request())
    for step, units in enumerate((9, 8, 7, 6)):
        schema = decrease(schema, units, NOON + step)
    assert table_updates.decreases_today(schema, NOON + 10) == 4
    with pytest.raises(LimitExceededException) as excinfo:
        decrease(schema, 5, NOON + 3599)
    assert str(excinfo.value) == (
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given "
        "UTC day. After the first 4 decreases, each subsequent decrease in the same UTC day can be "
        "performed at most once every 3600 seconds. Number of decreases today: 4. Last decrease at "
        "Thursday, October 8, 2026 at 12:00:03 PM Coordinated Universal Time. Next decrease can be "
        "made at Thursday, October 8, 2026 at 1:00:03 PM Coordinated Universal Time."
    )
    schema = decrease(schema, 5, NOON + 3 + 3600)
    assert table_updates.decreases_today(schema, NOON + 3603) == 5
    with pytest.raises(LimitExceededException):
        decrease(schema, 4, NOON + 3603 + 60)


def test_next_decrease_at_midnight_when_sooner() -> None:
    late = moment("2026-10-08T23:20:48")
    schema = replace(build(create_request()), decreases_today=4, last_decrease_time=late)
    with pytest.raises(LimitExceededException) as excinfo:
        decrease(schema, 5, late + 10)
    assert str(excinfo.value).endswith(
        "Next decrease can be made at Friday, October 9, 2026 at 12:00:00 AM Coordinated Universal Time."
    )


def test_decrease_count_resets_at_utc_midnight() -> None:
    late = moment("2026-10-08T23:59:00")
    schema = replace(build(create_request()), decreases_today=4, last_decrease_time=late)
    after_midnight = moment("2026-10-09T00:00:01")
    assert table_updates.decreases_today(schema, after_midnight) == 0
    assert table_description.throughput_description(schema, after_midnight)["NumberOfDecreasesToday"] == 0
    assert decrease(schema, 5, after_midnight).decreases_today == 1


@pytest.mark.parametrize(
    "text",
    [
        "1970-01-01T00:00:00",
        "2000-02-29T23:59:59",
        "2026-10-09T00:21:34",
        "2100-03-01T12:00:00",
        "1999-12-31T12:30:05",
    ],
)
def test_spoken_time_matches_the_calendar(text: str) -> None:
    value = datetime.datetime.fromisoformat(text)
    hour = value.hour % 12 or 12
    expected = (
        f"{value:%A}, {value:%B} {value.day}, {value.year} at {hour}:{value:%M}:{value:%S} "
        f"{'AM' if value.hour < 12 else 'PM'} Coordinated Universal Time"
    )
    assert utc_calendar.spoken_time(moment(text)) == expected


def test_increase_is_never_limited_and_raises_warm() -> None:
    schema = replace(build(create_request()), decreases_today=9, last_decrease_time=NOON)
    raised = table_updates.apply_provisioned_throughput(schema, 20, 30, NOON + 1)
    assert raised.last_increase_time == NOON + 1
    assert (raised.warm_read_units, raised.warm_write_units) == (20, 30)
    lowered = decrease(raised, 10, moment("2026-10-09T00:00:00"))
    assert (lowered.warm_read_units, lowered.warm_write_units) == (20, 30)


def test_billing_switches_keep_warm_throughput() -> None:
    schema = table_updates.switch_to_on_demand(build(create_request()), NOON)
    assert (schema.read_capacity_units, schema.warm_read_units) == (0, 12000)
    assert schema.billing_mode_last_update_time == NOON
    back = table_updates.switch_to_provisioned(schema, 1, 1)
    assert (back.billing_mode, back.warm_read_units, back.billing_mode_last_update_time) == (
        "PROVISIONED",
        12000,
        NOON,
    )


# --- UpdateTable request rules ----------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "changes"),
    [
        ({"GlobalSecondaryIndexUpdates": []}, set()),
        ({"WarmThroughput": {}}, set()),
        ({"MultiRegionConsistency": "STRONG"}, set()),
        ({"DeletionProtectionEnabled": False}, {"DeletionProtectionEnabled"}),
        ({"StreamSpecification": {"StreamEnabled": False}}, {"UpdateStreamEnabled"}),
        (
            {"BillingMode": "PAY_PER_REQUEST", "OnDemandThroughput": {"MaxReadRequestUnits": 1}},
            {"BillingMode", "OnDemandThroughput"},
        ),
    ],
)
def test_requested_changes(request_: dict[str, Any], changes: set[str]) -> None:
    assert table_updates.requested_changes(request_) == changes


def test_on_demand_limits_merge_and_clear() -> None:
    schema = replace(
        build(create_request()), on_demand_max_read_units=5, on_demand_max_write_units=6
    )
    merged = table_updates.apply_on_demand_limits(
        schema, {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": 9}
    )
    assert (merged.on_demand_max_read_units, merged.on_demand_max_write_units) == (None, 9)


def test_on_demand_limit_above_table_maximum() -> None:
    request = {"OnDemandThroughput": {"MaxReadRequestUnits": 40001}}
    with pytest.raises(LimitExceededException) as excinfo:
        table_settings.on_demand_limits(request, "PAY_PER_REQUEST", REGION, creating=False)
    assert str(excinfo.value) == (
        "Subscriber limit exceeded: Requested MaxReadRequestUnits for OnDemandThroughput for table "
        "exceeds TableMaxReadCapacityUnits of the account in region us-east-1"
    )


# --- ARNs and tags ------------------------------------------------------------------------


def test_table_name_from_identifier() -> None:
    assert table_arns.table_name_from_identifier(ARN) == "things"
    assert table_arns.table_name_from_identifier("things") == "things"


@pytest.mark.parametrize(
    ("arn", "error", "message"),
    [
        (None, ValidationException, "Invalid TableArn"),
        (
            "",
            ValidationException,
            "One or more parameter values were invalid: ARNs must start with 'arn:': ",
        ),
        (
            "arn:aws:sqs:us-east-1:1:q",
            ValidationException,
            "Provided Arn is not a DynamoDB resource arn",
        ),
        (f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:backup/x", ValidationException, "Invalid TableArn:"),
        (
            f"arn:aws:dynamodb:{REGION}:999999999999:table/things",
            ValidationException,
            "Invalid TableArn:",
        ),
        (f"{ARN}/index/i", ValidationException, "only table or stream is accepted"),
        (
            f"{ARN}/stream/2026",
            ResourceNotFoundException,
            "Requested resource not found: ResourceArn:",
        ),
        (
            f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/a;b",
            ValidationException,
            "Invalid TableArn:",
        ),
    ],
)
def test_table_name_from_arn_refusals(arn: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as excinfo:
        table_arns.table_name_from_arn(arn, REGION, ACCOUNT)
    assert message in str(excinfo.value)


def test_table_name_from_arn() -> None:
    assert table_arns.table_name_from_arn(ARN, REGION, ACCOUNT) == "things"


@pytest.mark.parametrize(
    "text", ["abc", "a b", "\u00e9t\u00e9", "\u8868", "+-=._:/@", "x\u00a0y", "٣"]
)
def test_tag_characters_accepted(text: str) -> None:
    assert table_tags.check_tag_key(text) == text
    assert table_tags.check_tag_value(text) == text


@pytest.mark.parametrize(
    "text", ["#", "a,b", "%", "'", '"', "(", "&", "*", ";", "?", "|", "\\", "<", "~", "\U0001f511"]
)
def test_tag_characters_refused(text: str) -> None:
    with pytest.raises(ValidationException):
        table_tags.check_tag_key(text)
    with pytest.raises(ValidationException):
        table_tags.check_tag_value(text)


def test_merge_tags_keeps_order_and_limit() -> None:
    merged = table_tags.merge_tags((("a", "1"), ("b", "2")), (("b", "3"), ("c", "4")))
    assert merged == (("a", "1"), ("b", "3"), ("c", "4"))
    full = tuple((f"k{i}", "v") for i in range(50))
    assert table_tags.merge_tags(full, (("k0", "w"),))[0] == ("k0", "w")
    with pytest.raises(ValidationException):
        table_tags.merge_tags(full, (("new", "v"),))


def test_table_class_changes_per_thirty_days() -> None:
    schema = build(create_request())
    schema = table_updates.apply_table_class(schema, "STANDARD_INFREQUENT_ACCESS", NOON)
    schema = table_updates.apply_table_class(schema, "STANDARD", NOON + 60)
    for table_class in ("STANDARD", "STANDARD_INFREQUENT_ACCESS"):  # a re-send too, once spent (live)
        with pytest.raises(LimitExceededException):
            table_updates.apply_table_class(schema, table_class, NOON + 120)
    later = NOON + 30 * 86400 + 1
    assert table_updates.apply_table_class(
        schema, "STANDARD_INFREQUENT_ACCESS", later
    ).table_class_changes == (
        NOON + 60,
        later,
    )

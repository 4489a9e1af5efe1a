"""CreateTable: DynamoDB's validation, messages and TableDescription shape."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
HASH_ONLY = {
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
}
ON_DEMAND = {"BillingMode": "PAY_PER_REQUEST"}
PROVISIONED_1_1 = {"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}


@pytest.fixture
def create(
    client: Any, unique_name: Callable[[str], str]
) -> Iterator[Callable[..., dict[str, Any]]]:
    """``create(**arguments)`` calls CreateTable with a fresh name unless one is
    given; every table it made is deleted afterwards."""
    created: list[str] = []

    def run(**arguments: Any) -> dict[str, Any]:
        arguments.setdefault("TableName", unique_name("create"))
        response = client.create_table(**arguments)
        created.append(arguments["TableName"])
        return response

    yield run
    for name in created:
        try:
            client.delete_table(TableName=name)
        except ClientError:
            pass


def refused(create: Callable[..., dict[str, Any]], **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        create(**arguments)
    return error_of(excinfo)


# --- success and the response shape -----------------------------------------------


def test_on_demand_table_description(create: Any, unique_name: Any) -> None:
    name = unique_name("create")
    before = time.time()
    description = create(TableName=name, **HASH_ONLY, **ON_DEMAND)["TableDescription"]
    assert description["TableName"] == name
    assert description["TableStatus"] == "CREATING"
    assert description["AttributeDefinitions"] == HASH_ONLY["AttributeDefinitions"]
    assert description["KeySchema"] == HASH_ONLY["KeySchema"]
    assert description["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 0,
        "WriteCapacityUnits": 0,
    }
    assert description["TableSizeBytes"] == 0
    assert description["ItemCount"] == 0
    assert re.fullmatch(
        rf"arn:aws:dynamodb:us-east-1:\d{{12}}:table/{name}", description["TableArn"]
    )
    assert UUID4.match(description["TableId"])
    # The create answer carries the mode only; DescribeTable adds the timestamp.
    assert description["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}
    assert description["DeletionProtectionEnabled"] is False
    assert "WarmThroughput" not in description
    assert "TableClassSummary" not in description
    assert description["CreationDateTime"].timestamp() >= before - 5


def test_provisioned_table_description(create: Any) -> None:
    description = create(
        **HASH_ONLY, ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 7}
    )["TableDescription"]
    assert description["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 3,
        "WriteCapacityUnits": 7,
    }
    assert "BillingModeSummary" not in description


def test_explicit_provisioned_billing_mode(create: Any) -> None:
    description = create(**HASH_ONLY, BillingMode="PROVISIONED", **PROVISIONED_1_1)[
        "TableDescription"
    ]
    assert description["ProvisionedThroughput"]["ReadCapacityUnits"] == 1
    assert "BillingModeSummary" not in description


def test_table_is_active_and_usable_at_once(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("create")
    create(TableName=name, **HASH_ONLY, **ON_DEMAND)
    assert client.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    client.put_item(TableName=name, Item={"pk": {"S": "a"}})
    assert client.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}


def test_composite_key_with_every_key_type(client: Any, create: Any, unique_name: Any) -> None:
    for partition_type, sort_type in (("S", "N"), ("N", "B"), ("B", "S")):
        name = unique_name("create")
        description = create(
            TableName=name,
            AttributeDefinitions=[
                {"AttributeName": "sk", "AttributeType": sort_type},
                {"AttributeName": "pk", "AttributeType": partition_type},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            **ON_DEMAND,
        )["TableDescription"]
        # AttributeDefinitions come back in the order they were sent.
        assert [d["AttributeName"] for d in description["AttributeDefinitions"]] == ["sk", "pk"]
        assert description["KeySchema"][1] == {"AttributeName": "sk", "KeyType": "RANGE"}


def test_table_names_are_case_sensitive(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("case")
    create(TableName=name, **HASH_ONLY, **ON_DEMAND)
    create(TableName=name.upper(), **HASH_ONLY, **ON_DEMAND)
    names = client.list_tables(Limit=100, ExclusiveStartTableName=name.upper()[:-1])["TableNames"]
    assert name.upper() in names


def test_table_name_may_use_dots_dashes_underscores(create: Any, unique_name: Any) -> None:
    name = unique_name("a.b_c-d")
    assert create(TableName=name, **HASH_ONLY, **ON_DEMAND)["TableDescription"]["TableName"] == name


def test_attribute_names_are_not_normalised(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("names")
    create(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": " p k.\u00e9", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": " p k.\u00e9", "KeyType": "HASH"}],
        **ON_DEMAND,
    )
    table = client.describe_table(TableName=name)["Table"]
    assert table["KeySchema"] == [{"AttributeName": " p k.\u00e9", "KeyType": "HASH"}]


def test_duplicate_table_is_resource_in_use(create: Any, unique_name: Any) -> None:
    name = unique_name("dup")
    create(TableName=name, **HASH_ONLY, **ON_DEMAND)
    code, message = refused(create, TableName=name, **HASH_ONLY, **PROVISIONED_1_1)
    assert (code, message) == ("ResourceInUseException", f"Table already exists: {name}")


def test_duplicate_with_invalid_definition_is_validation_first(
    create: Any, unique_name: Any
) -> None:
    name = unique_name("dup")
    create(TableName=name, **HASH_ONLY, **ON_DEMAND)
    code, message = refused(
        create,
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        **ON_DEMAND,
    )
    assert code == "ValidationException"
    assert "Some index key attributes are not defined" in message


def test_recreate_after_delete_gets_new_id_same_arn(
    client: Any, create: Any, unique_name: Any
) -> None:
    name = unique_name("recreate")
    first = create(TableName=name, **HASH_ONLY, **ON_DEMAND)["TableDescription"]
    client.delete_table(TableName=name)
    second = create(TableName=name, **HASH_ONLY, **ON_DEMAND)["TableDescription"]
    assert second["TableArn"] == first["TableArn"]
    assert second["TableId"] != first["TableId"]


# --- billing mode and provisioned throughput ---------------------------------------


def test_default_billing_mode_requires_throughput(create: Any) -> None:
    code, message = refused(create, **HASH_ONLY)
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits "
        "must both be specified when BillingMode is PROVISIONED"
    )


def test_provisioned_billing_mode_requires_throughput(create: Any) -> None:
    code, message = refused(create, **HASH_ONLY, BillingMode="PROVISIONED")
    assert code == "ValidationException"
    assert "ReadCapacityUnits and WriteCapacityUnits must both be specified" in message


def test_on_demand_forbids_throughput(create: Any) -> None:
    code, message = refused(create, **HASH_ONLY, **ON_DEMAND, **PROVISIONED_1_1)
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
        "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
    )


@pytest.mark.parametrize(
    ("read", "write", "expected"),
    [
        (
            1000000000001,
            1000000000001,
            "Given value 1000000000001 for ReadCapacityUnits is out of bounds",
        ),
        (
            1000000000000,
            1000000000001,
            "Given value 1000000000001 for WriteCapacityUnits is out of bounds",
        ),
    ],
)
def test_throughput_out_of_bounds(create: Any, read: int, write: int, expected: str) -> None:
    code, message = refused(
        create,
        AttributeDefinitions=[],
        KeySchema=[{"AttributeName": "a", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
    )
    assert (code, message) == ("ValidationException", expected)


def test_throughput_below_one_is_a_constraint_error(create: Any) -> None:
    code, message = refused(
        create, **HASH_ONLY, ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    )
    assert code == "ValidationException"
    assert "Member must have value greater than or equal to 1" in message


def test_throughput_above_table_maximum(create: Any) -> None:
    code, message = refused(
        create,
        **HASH_ONLY,
        ProvisionedThroughput={"ReadCapacityUnits": 40001, "WriteCapacityUnits": 1},
    )
    assert code == "LimitExceededException"
    assert message == (
        "The requested ReadCapacityUnits, 40001, is above the per table maximum for the account "
        "in us-east-1. Per table maximum: 40000. Refer to the Amazon DynamoDB Developer Guide for current "
        "limits and how to request higher limits."
    )
    code, message = refused(
        create,
        **HASH_ONLY,
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 40001},
    )
    assert code == "LimitExceededException"
    assert message.startswith(
        "The requested WriteCapacityUnits, 40001, is above the per table maximum"
    )


def test_throughput_at_table_maximum_is_accepted(create: Any) -> None:
    description = create(
        **HASH_ONLY, ProvisionedThroughput={"ReadCapacityUnits": 40000, "WriteCapacityUnits": 1}
    )["TableDescription"]
    assert description["ProvisionedThroughput"]["ReadCapacityUnits"] == 40000


# --- key schema and attribute definitions -------------------------------------------


def key_case(definitions: list[tuple[str, str]], keys: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in definitions],
        "KeySchema": [{"AttributeName": n, "KeyType": t} for n, t in keys],
        **PROVISIONED_1_1,
    }


GENERIC_NO_DEFINITION = "Invalid KeySchema: Some index key attribute have no definition"


@pytest.mark.parametrize(
    ("definitions", "keys", "expected"),
    [
        ([], [("a", "HASH")], GENERIC_NO_DEFINITION),
        ([], [("a", "HASH"), ("a", "HASH")], GENERIC_NO_DEFINITION),
        ([("b", "S")], [("a", "HASH"), ("a", "HASH")], GENERIC_NO_DEFINITION),
        ([("b", "S")], [("a", "HASH"), ("b", "RANGE")], GENERIC_NO_DEFINITION),
        ([("a", "S")], [("a", "HASH"), ("a", "HASH")], GENERIC_NO_DEFINITION),
        (
            [("b", "S")],
            [("a", "HASH")],
            "One or more parameter values were invalid: Some index key attributes are not "
            "defined in AttributeDefinitions. Keys: [a], AttributeDefinitions: [b]",
        ),
        (
            [("pk", "S")],
            [("PK", "HASH")],
            "One or more parameter values were invalid: Some index key attributes are not "
            "defined in AttributeDefinitions. Keys: [PK], AttributeDefinitions: [pk]",
        ),
        (
            [("a", "S"), ("b", "S")],
            [("a", "HASH"), ("a", "HASH")],
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        ),
        (
            [("a", "S"), ("b", "S")],
            [("a", "HASH"), ("a", "RANGE")],
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        ),
        (
            [("a", "S"), ("b", "S")],
            [("a", "HASH"), ("b", "HASH")],
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        ),
        (
            [("a", "S"), ("b", "S")],
            [("a", "RANGE"), ("b", "HASH")],
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            [("a", "S"), ("b", "S")],
            [("a", "RANGE"), ("b", "RANGE")],
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            [("a", "S")],
            [("a", "RANGE")],
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            [("a", "S"), ("c", "S"), ("b", "S")],
            [("a", "HASH"), ("b", "RANGE")],
            "One or more parameter values were invalid: Number of attributes in KeySchema does "
            "not exactly match number of attributes defined in AttributeDefinitions",
        ),
        (
            [("a", "S"), ("b", "S")],
            [("a", "HASH")],
            "One or more parameter values were invalid: Number of attributes in KeySchema does "
            "not exactly match number of attributes defined in AttributeDefinitions",
        ),
        ([("pk", "S"), ("pk", "S")], [("pk", "HASH")], "Attribute Name is duplicated: pk"),
        ([("pk", "S"), ("pk", "N")], [("pk", "HASH")], "Attribute Name is duplicated: pk"),
    ],
)
def test_key_schema_rules(
    create: Any, definitions: list[tuple[str, str]], keys: list[tuple[str, str]], expected: str
) -> None:
    code, message = refused(create, **key_case(definitions, keys))
    assert (code, message) == ("ValidationException", expected)


@pytest.mark.parametrize("attribute_type", ["SS", "BOOL", "a", "s"])
def test_attribute_type_must_be_scalar(create: Any, attribute_type: str) -> None:
    code, message = refused(create, **key_case([("a", attribute_type)], [("a", "HASH")]))
    assert code == "ValidationException"
    assert "Member must satisfy enum value set: [B, N, S]" in message


def test_key_schema_of_three_elements(create: Any) -> None:
    code, message = refused(
        create,
        **key_case(
            [("a", "S"), ("b", "S"), ("c", "S")], [("a", "HASH"), ("b", "RANGE"), ("c", "RANGE")]
        ),
    )
    assert code == "ValidationException"
    assert "Member must have length less than or equal to 2" in message


def test_empty_key_schema(create: Any) -> None:
    code, message = refused(create, **key_case([("a", "S")], []))
    assert code == "ValidationException"
    assert "Member must have length greater than or equal to 1" in message


def test_missing_key_schema(create: Any) -> None:
    code, message = refused(
        create,
        AttributeDefinitions=[{"AttributeName": "a", "AttributeType": "S"}],
        **PROVISIONED_1_1,
    )
    assert code == "ValidationException"
    assert (
        "Value null at 'keySchema' failed to satisfy constraint: Member must not be null" in message
    )


# --- table names ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "ab", "a" * 256])
def test_table_name_length(create: Any, name: str) -> None:
    code, message = refused(create, TableName=name, **HASH_ONLY, **ON_DEMAND)
    assert code == "ValidationException"
    assert "TableName must be at least 3 characters long and at most 255 characters long" in message


def test_table_name_pattern(create: Any) -> None:
    code, message = refused(create, TableName="abc;", **HASH_ONLY, **ON_DEMAND)
    assert code == "ValidationException"
    assert "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" in message


def test_table_name_of_255_characters(create: Any) -> None:
    name = ("t" + time.strftime("%H%M%S") + "x" * 255)[:255]
    assert (
        len(create(TableName=name, **HASH_ONLY, **ON_DEMAND)["TableDescription"]["TableName"])
        == 255
    )


# --- indexes, streams and other members ---------------------------------------------


@pytest.mark.parametrize("member", ["LocalSecondaryIndexes", "GlobalSecondaryIndexes"])
def test_empty_index_list(create: Any, member: str) -> None:
    code, message = refused(
        create,
        **key_case([("a", "S"), ("b", "S")], [("a", "HASH"), ("b", "RANGE")]),
        **{member: []},
    )
    assert (code, message) == (
        "ValidationException",
        f"One or more parameter values were invalid: List of {member} is empty",
    )


def index(name: str) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [
            {"AttributeName": "a", "KeyType": "HASH"},
            {"AttributeName": "b", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "ALL"},
    }


def test_stream_enabled_without_view_type(create: Any) -> None:
    code, message = refused(
        create, **HASH_ONLY, **ON_DEMAND, StreamSpecification={"StreamEnabled": True}
    )
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: Table is being created with a stream "
        "enabled, UpdateViewType is required",
    )


def test_stream_disabled_with_view_type(create: Any) -> None:
    code, message = refused(
        create,
        **HASH_ONLY,
        **ON_DEMAND,
        StreamSpecification={"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"},
    )
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: Table is being created with a stream "
        "disabled, UpdateViewType should not be specified",
    )


def test_disabled_stream_is_accepted(create: Any) -> None:
    description = create(**HASH_ONLY, **ON_DEMAND, StreamSpecification={"StreamEnabled": False})
    assert "StreamSpecification" not in description["TableDescription"]


def test_table_class_and_deletion_protection(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("class")
    description = create(
        TableName=name,
        **HASH_ONLY,
        **ON_DEMAND,
        TableClass="STANDARD_INFREQUENT_ACCESS",
        DeletionProtectionEnabled=True,
    )["TableDescription"]
    assert description["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    assert description["DeletionProtectionEnabled"] is True
    client.update_table(TableName=name, DeletionProtectionEnabled=False)


def test_explicit_standard_table_class_is_reported(create: Any) -> None:
    description = create(**HASH_ONLY, **ON_DEMAND, TableClass="STANDARD")["TableDescription"]
    assert description["TableClassSummary"] == {"TableClass": "STANDARD"}


def test_unknown_table_class(create: Any) -> None:
    code, message = refused(create, **HASH_ONLY, **ON_DEMAND, TableClass="standard")
    assert code == "ValidationException"
    assert "STANDARD_INFREQUENT_ACCESS" in message


def test_unknown_billing_mode(create: Any) -> None:
    code, message = refused(create, **HASH_ONLY, BillingMode="ON_DEMAND")
    assert code == "ValidationException"
    assert "Member must satisfy enum value set" in message


def test_tags_at_creation(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("tags")
    arn = create(
        TableName=name,
        **HASH_ONLY,
        **ON_DEMAND,
        Tags=[{"Key": "env", "Value": "test"}, {"Key": "team", "Value": ""}],
    )["TableDescription"]["TableArn"]
    tags = client.list_tags_of_resource(ResourceArn=arn)["Tags"]
    assert sorted(tags, key=lambda tag: tag["Key"]) == [
        {"Key": "env", "Value": "test"},
        {"Key": "team", "Value": ""},
    ]


def test_empty_tag_list_is_accepted(create: Any) -> None:
    assert (
        create(**HASH_ONLY, **ON_DEMAND, Tags=[])["TableDescription"]["TableStatus"] == "CREATING"
    )


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ([{"Key": "aws:x", "Value": "v"}], "Tag Key cannot be prefixed with aws:, Key: aws:x"),
        pytest.param(
            [{"Key": "k" * 129, "Value": "v"}], "The Tag Key provided is invalid, Key: " + "k" * 129
        ),
        ([{"Key": "a#b", "Value": "v"}], "The Tag Key provided is invalid, Key: a#b"),
        (
            [{"Key": f"k{i}", "Value": "v"} for i in range(51)],
            "Number of Tags exceed the current limit for the provided ResourceArn",
        ),
        (
            [{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}],
            "Duplicate Tag Keys provided as input: Duplicate Tag Key found dup",
        ),
    ],
)
def test_invalid_tags_create_nothing(
    client: Any, create: Any, unique_name: Any, tags: list[dict[str, str]], expected: str
) -> None:
    name = unique_name("tags")
    code, message = refused(create, TableName=name, **HASH_ONLY, **ON_DEMAND, Tags=tags)
    assert (code, message) == ("ValidationException", expected)
    with pytest.raises(ClientError) as excinfo:
        client.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_fifty_tags_are_accepted(client: Any, create: Any) -> None:
    tags = [{"Key": f"k{i:02}", "Value": f"v{i}"} for i in range(50)]
    arn = create(**HASH_ONLY, **ON_DEMAND, Tags=tags)["TableDescription"]["TableArn"]
    assert len(client.list_tags_of_resource(ResourceArn=arn)["Tags"]) == 50


# --- on-demand and warm throughput --------------------------------------------------


def test_on_demand_throughput_is_echoed(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("odt")
    description = create(
        TableName=name,
        **HASH_ONLY,
        **ON_DEMAND,
        OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
    )["TableDescription"]
    assert description["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 100,
        "MaxWriteRequestUnits": 50,
    }
    table = client.describe_table(TableName=name)["Table"]
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}


def test_on_demand_throughput_on_provisioned_table(create: Any) -> None:
    code, message = refused(
        create, **HASH_ONLY, **PROVISIONED_1_1, OnDemandThroughput={"MaxReadRequestUnits": 100}
    )
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: MaxReadRequestUnits for OnDemandThroughput "
        "cannot be specified when table BillingMode is PROVISIONED.",
    )


@pytest.mark.parametrize("value", [0, -1, -2])
def test_on_demand_throughput_range(create: Any, value: int) -> None:
    code, message = refused(
        create, **HASH_ONLY, **ON_DEMAND, OnDemandThroughput={"MaxWriteRequestUnits": value}
    )
    assert code == "ValidationException"
    assert message == (
        "One or more parameter values were invalid: Requested MaxWriteRequestUnits for "
        "OnDemandThroughput for table is outside of valid range"
    )


def test_warm_throughput_at_creation(client: Any, create: Any, unique_name: Any) -> None:
    name = unique_name("warm")
    description = create(
        TableName=name,
        **HASH_ONLY,
        **ON_DEMAND,
        WarmThroughput={"ReadUnitsPerSecond": 12001, "WriteUnitsPerSecond": 4001},
    )["TableDescription"]
    assert description["WarmThroughput"]["ReadUnitsPerSecond"] == 12001
    warm = client.describe_table(TableName=name)["Table"]["WarmThroughput"]
    assert warm == {"ReadUnitsPerSecond": 12001, "WriteUnitsPerSecond": 4001, "Status": "ACTIVE"}


def test_warm_throughput_below_on_demand_initial(create: Any) -> None:
    code, message = refused(
        create,
        **HASH_ONLY,
        **ON_DEMAND,
        WarmThroughput={"ReadUnitsPerSecond": 1, "WriteUnitsPerSecond": 1},
    )
    assert code == "ValidationException"
    assert message.startswith(
        "One or more parameter values were invalid: Requested ReadUnitsPerSecond for "
        "WarmThroughput for table is lower than initial throughput for OnDemand."
    )


def test_warm_throughput_below_provisioned_capacity(create: Any) -> None:
    code, message = refused(
        create,
        **HASH_ONLY,
        ProvisionedThroughput={"ReadCapacityUnits": 10, "WriteCapacityUnits": 10},
        WarmThroughput={"ReadUnitsPerSecond": 5, "WriteUnitsPerSecond": 5},
    )
    assert (code, message) == (
        "ValidationException",
        "One or more parameter values were invalid: Requested ReadUnitsPerSecond for "
        "WarmThroughput for table is lower than ReadCapacityUnits of ProvisionedThroughput",
    )


def test_table_name_given_as_arn(client: Any, create: Any, unique_name: Any) -> None:
    other_arn = create(**HASH_ONLY, **ON_DEMAND)["TableDescription"]["TableArn"]
    name = unique_name("viaarn")
    arn = other_arn.rsplit("/", 1)[0] + "/" + name
    description = create(TableName=arn, **HASH_ONLY, **ON_DEMAND)["TableDescription"]
    assert description["TableName"] == name
    assert client.describe_table(TableName=name)["Table"]["TableName"] == name
    client.delete_table(TableName=name)


def lsi(
    name: str, keys: list[tuple[str, str]], projection: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": n, "KeyType": t} for n, t in keys],
        "Projection": {"ProjectionType": "ALL"} if projection is None else projection,
    }


TWO_KEYS = key_case([("a", "S"), ("b", "S")], [("a", "HASH"), ("b", "RANGE")])


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            dict(
                key_case([("a", "S"), ("b", "S")], [("a", "HASH")]),
                LocalSecondaryIndexes=[lsi("abc", [("a", "HASH"), ("b", "RANGE")])],
            ),
            "One or more parameter values were invalid: Table KeySchema does not have a range key, "
            "which is required when specifying a LocalSecondaryIndex",
        ),
        (
            dict(TWO_KEYS, LocalSecondaryIndexes=[lsi("abc", [("a", "HASH"), ("c", "RANGE")])]),
            "One or more parameter values were invalid: Some index key attributes are not defined "
            "in AttributeDefinitions. Keys: [a, c], AttributeDefinitions: [a, b]",
        ),
        (
            dict(TWO_KEYS, LocalSecondaryIndexes=[lsi("abc", [("a", "RANGE")])]),
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            dict(TWO_KEYS, LocalSecondaryIndexes=[lsi("abc", [("a", "HASH"), ("a", "RANGE")])]),
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        ),
        (
            dict(TWO_KEYS, LocalSecondaryIndexes=[lsi("abc", [("b", "HASH")])]),
            "One or more parameter values were invalid: Index KeySchema does not have a range "
            "key for index: abc",
        ),
        (
            dict(TWO_KEYS, LocalSecondaryIndexes=[lsi("abc", [("b", "HASH"), ("a", "RANGE")])]),
            "One or more parameter values were invalid: Index KeySchema does not have the same "
            "leading hash key as table KeySchema for index: abc. index hash key: b, table hash key: a",
        ),
        (
            dict(TWO_KEYS, LocalSecondaryIndexes=[lsi("abc", [("a", "HASH"), ("b", "RANGE")], {})]),
            "One or more parameter values were invalid: Unknown ProjectionType: null",
        ),
        (
            dict(
                TWO_KEYS,
                LocalSecondaryIndexes=[
                    lsi(
                        "abc",
                        [("a", "HASH"), ("b", "RANGE")],
                        {"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["x"]},
                    )
                ],
            ),
            "One or more parameter values were invalid: ProjectionType is KEYS_ONLY, but "
            "NonKeyAttributes is specified",
        ),
        (
            dict(
                TWO_KEYS,
                LocalSecondaryIndexes=[lsi("abc", [("a", "HASH"), ("b", "RANGE")])] * 2,
            ),
            "One or more parameter values were invalid: Duplicate index name: abc",
        ),
        (
            dict(
                TWO_KEYS,
                LocalSecondaryIndexes=[
                    lsi(f"ab{i}", [("a", "HASH"), ("b", "RANGE")]) for i in range(6)
                ],
            ),
            "One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds "
            "per-table limit of 5",
        ),
        (
            dict(TWO_KEYS, GlobalSecondaryIndexes=[lsi("abc", [("b", "HASH")])]),
            "One or more parameter values were invalid: ProvisionedThroughput is not specified "
            "for index: abc",
        ),
        (
            dict(
                TWO_KEYS,
                LocalSecondaryIndexes=[lsi("abc", [("a", "HASH"), ("b", "RANGE")])],
                GlobalSecondaryIndexes=[
                    dict(
                        lsi("abc", [("b", "HASH")]),
                        ProvisionedThroughput=PROVISIONED_1_1["ProvisionedThroughput"],
                    )
                ],
            ),
            "One or more parameter values were invalid: Duplicate index name: abc",
        ),
    ],
)
def test_index_definitions_are_validated(
    create: Any, arguments: dict[str, Any], expected: str
) -> None:
    assert refused(create, **arguments) == ("ValidationException", expected)


def test_on_demand_index_with_throughput(create: Any) -> None:
    arguments = dict(TWO_KEYS, BillingMode="PAY_PER_REQUEST")
    del arguments["ProvisionedThroughput"]
    gsi = dict(
        lsi("abc", [("b", "HASH")]), ProvisionedThroughput=PROVISIONED_1_1["ProvisionedThroughput"]
    )
    assert refused(create, **arguments, GlobalSecondaryIndexes=[gsi]) == (
        "ValidationException",
        "One or more parameter values were invalid: ProvisionedThroughput should not be "
        "specified for index: abc when BillingMode is PAY_PER_REQUEST",
    )


def test_sse_is_enabled_by_its_type_alone_and_refused_as_not_supported(client: Any, unique_name: Any) -> None:
    """DynamoDB infers Enabled from SSEType ({SSEType: KMS} turns KMS on:
    ack-api-quirks DDB-TABLE-044, live); dynastore supports no KMS key yet,
    so both forms get the same refusal, and {} is the default encryption."""
    base = dict(BillingMode="PAY_PER_REQUEST", AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for specification in ({"Enabled": True}, {"SSEType": "KMS"}):
        with pytest.raises(ClientError) as excinfo:
            client.create_table(TableName=unique_name("sse"), SSESpecification=specification, **base)
        assert excinfo.value.response["Error"]["Message"] == (
            "dynastore does not support SSESpecification yet (see docs/compatibility.md)"
        )
    name = unique_name("sse")
    client.create_table(TableName=name, SSESpecification={}, **base)
    assert "SSEDescription" not in client.describe_table(TableName=name)["Table"]
    client.delete_table(TableName=name)

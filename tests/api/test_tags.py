"""TagResource, UntagResource, ListTagsOfResource: upsert semantics, the
50-tag limit, key/value rules, ARN validation and DynamoDB's messages."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


@pytest.fixture
def arn(client: Any, make_table: Any) -> str:
    return str(client.describe_table(TableName=make_table())["Table"]["TableArn"])


def tags_of(client: Any, arn: str) -> dict[str, str]:
    return {
        tag["Key"]: tag["Value"] for tag in client.list_tags_of_resource(ResourceArn=arn)["Tags"]
    }


def tag_error(client: Any, arn: str, tags: list[dict[str, Any]]) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.tag_resource(ResourceArn=arn, Tags=tags)
    return error_of(excinfo)


def untag_error(client: Any, arn: str, keys: list[Any]) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        client.untag_resource(ResourceArn=arn, TagKeys=keys)
    return error_of(excinfo)


# --- round trips ------------------------------------------------------------------


def test_new_table_has_no_tags(client: Any, arn: str) -> None:
    assert client.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def test_tag_list_untag(client: Any, arn: str) -> None:
    client.tag_resource(
        ResourceArn=arn, Tags=[{"Key": "t1", "Value": "v1"}, {"Key": "t2", "Value": "v2"}]
    )
    assert tags_of(client, arn) == {"t1": "v1", "t2": "v2"}
    client.untag_resource(ResourceArn=arn, TagKeys=["t1", "t2"])
    assert client.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def test_tag_resource_upserts(client: Any, arn: str) -> None:
    client.tag_resource(
        ResourceArn=arn, Tags=[{"Key": "k", "Value": "v1"}, {"Key": "other", "Value": "x"}]
    )
    client.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v2"}])
    assert tags_of(client, arn) == {"k": "v2", "other": "x"}


def test_untag_absent_key_is_a_no_op(client: Any, arn: str) -> None:
    client.tag_resource(
        ResourceArn=arn, Tags=[{"Key": "present", "Value": "v"}, {"Key": "kept", "Value": "v"}]
    )
    client.untag_resource(ResourceArn=arn, TagKeys=["never-set"])
    client.untag_resource(ResourceArn=arn, TagKeys=["never-set", "present"])
    assert tags_of(client, arn) == {"kept": "v"}


def test_keys_are_case_sensitive_and_values_may_be_empty(client: Any, arn: str) -> None:
    client.tag_resource(
        ResourceArn=arn, Tags=[{"Key": "Env", "Value": ""}, {"Key": "env", "Value": "x"}]
    )
    assert tags_of(client, arn) == {"Env": "", "env": "x"}


def test_allowed_characters(client: Any, arn: str) -> None:
    tags = [
        {"Key": "sp ace", "Value": "a b+c-d=e.f_g:h/i@j"},
        {"Key": "\u043a\u043b\u044e\u0447", "Value": "caf\u00e9 \u8868"},
        {"Key": "myaws:foo", "Value": "1"},
        {"Key": " leading", "Value": "x"},
    ]
    client.tag_resource(ResourceArn=arn, Tags=tags)
    assert tags_of(client, arn) == {tag["Key"]: tag["Value"] for tag in tags}


def test_tags_follow_the_table(client: Any, unique_name: Any) -> None:
    name = unique_name("tagged")
    arn = client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        Tags=[{"Key": "a", "Value": "1"}],
    )["TableDescription"]["TableArn"]
    client.delete_table(TableName=name)
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        # A re-created table does not inherit its predecessor's tags.
        assert client.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    finally:
        client.delete_table(TableName=name)


def test_tags_survive_table_updates(client: Any, arn: str) -> None:
    client.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}])
    client.update_table(TableName=arn, TableClass="STANDARD_INFREQUENT_ACCESS")
    assert tags_of(client, arn) == {"k": "v"}


# --- tag validation ---------------------------------------------------------------


def test_empty_tag_list(client: Any, arn: str) -> None:
    assert tag_error(client, arn, []) == (
        "ValidationException",
        "Atleast one Tag needs to be provided as Input.",
    )


def test_empty_tag_key_list(client: Any, arn: str) -> None:
    assert untag_error(client, arn, []) == (
        "ValidationException",
        "Atleast one Tag Key needs to be provided as Input.",
    )


@pytest.mark.parametrize("key", ["aws:foo", "AWS:foo", "Aws:x"])
def test_aws_prefix_is_reserved(client: Any, arn: str, key: str) -> None:
    assert tag_error(client, arn, [{"Key": key, "Value": "v"}]) == (
        "ValidationException",
        f"Tag Key cannot be prefixed with aws:, Key: {key}",
    )
    assert untag_error(client, arn, [key]) == (
        "ValidationException",
        f"Tag Key cannot be prefixed with aws:, Key: {key}",
    )


@pytest.mark.parametrize("key", ["bad#char", "\U0001f511", "a,b", "100%", "a*b", "<a>"])
def test_invalid_key_characters(client: Any, arn: str, key: str) -> None:
    assert tag_error(client, arn, [{"Key": key, "Value": "v"}]) == (
        "ValidationException",
        f"The Tag Key provided is invalid, Key: {key}",
    )


@pytest.mark.parametrize("value", ["bad#char", "\U0001f511", "a;b", "a|b", "~a"])
def test_invalid_value_characters(client: Any, arn: str, value: str) -> None:
    assert tag_error(client, arn, [{"Key": "k", "Value": value}]) == (
        "ValidationException",
        f"The Tag Value provided is invalid, Value: {value}",
    )


def test_key_of_128_and_value_of_256_characters(client: Any, arn: str) -> None:
    client.tag_resource(ResourceArn=arn, Tags=[{"Key": "k" * 128, "Value": "v" * 256}])
    assert tags_of(client, arn) == {"k" * 128: "v" * 256}


def test_key_of_129_characters(client: Any, arn: str) -> None:
    assert tag_error(client, arn, [{"Key": "k" * 129, "Value": "v"}]) == (
        "ValidationException",
        "The Tag Key provided is invalid, Key: " + "k" * 129,
    )


def test_value_of_257_characters(client: Any, arn: str) -> None:
    assert tag_error(client, arn, [{"Key": "k", "Value": "v" * 257}]) == (
        "ValidationException",
        "The Tag Value provided is invalid, Value: " + "v" * 257,
    )


def test_empty_key(client: Any, arn: str) -> None:
    assert tag_error(client, arn, [{"Key": "", "Value": "v"}]) == (
        "ValidationException",
        "The Tag Key provided is invalid, Key: ",
    )


def test_tag_without_value(client: Any, arn: str) -> None:
    assert tag_error(client, arn, [{"Key": "k"}]) == (
        "ValidationException",
        "The Tag Value provided is invalid, Value: null",
    )


def test_tag_without_key(client: Any, arn: str) -> None:
    assert tag_error(client, arn, [{"Value": "v"}]) == (
        "ValidationException",
        "The Tag Key provided is invalid, Key: null",
    )


def test_duplicate_keys(client: Any, arn: str) -> None:
    tags = [{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}]
    assert tag_error(client, arn, tags) == (
        "ValidationException",
        "Duplicate Tag Keys provided as input: Duplicate Tag Key found dup",
    )
    assert tags_of(client, arn) == {}


def test_invalid_tag_applies_nothing(client: Any, arn: str) -> None:
    code, _ = tag_error(
        client, arn, [{"Key": "good", "Value": "v"}, {"Key": "aws:zzz", "Value": "v"}]
    )
    assert code == "ValidationException"
    assert tags_of(client, arn) == {}


def test_fifty_tag_limit_counts_the_merged_set(client: Any, arn: str) -> None:
    too_many = "Number of Tags exceed the current limit for the provided ResourceArn"
    client.tag_resource(
        ResourceArn=arn, Tags=[{"Key": f"k{i:02}", "Value": "v"} for i in range(50)]
    )
    assert tag_error(client, arn, [{"Key": "k50", "Value": "v"}]) == (
        "ValidationException",
        too_many,
    )
    assert tag_error(
        client, arn, [{"Key": "k00", "Value": "new"}, {"Key": "k50", "Value": "v"}]
    ) == (
        "ValidationException",
        too_many,
    )
    # Overwriting existing keys keeps the count at 50.
    client.tag_resource(
        ResourceArn=arn, Tags=[{"Key": f"k{i:02}", "Value": "w"} for i in range(50)]
    )
    assert set(tags_of(client, arn).values()) == {"w"}


def test_fifty_one_tags_in_one_request(client: Any, arn: str) -> None:
    tags = [{"Key": f"k{i}", "Value": "v"} for i in range(51)]
    assert tag_error(client, arn, tags) == (
        "ValidationException",
        "Number of Tags exceed the current limit for the provided ResourceArn",
    )


def test_untag_more_than_fifty_keys(client: Any, arn: str) -> None:
    assert untag_error(client, arn, [f"k{i}" for i in range(51)]) == (
        "ValidationException",
        "Number of Tags exceed the current limit for the provided ResourceArn",
    )


# --- resource ARNs ----------------------------------------------------------------


def each_operation(client: Any, resource_arn: str) -> list[tuple[str, str]]:
    """The error every tagging operation answers for ``resource_arn``."""
    calls = [
        lambda: client.tag_resource(ResourceArn=resource_arn, Tags=[{"Key": "k", "Value": "v"}]),
        lambda: client.untag_resource(ResourceArn=resource_arn, TagKeys=["k"]),
        lambda: client.list_tags_of_resource(ResourceArn=resource_arn),
    ]
    errors = []
    for call in calls:
        with pytest.raises(ClientError) as excinfo:
            call()
        errors.append(error_of(excinfo))
    return errors


def test_missing_table(client: Any, arn: str, unique_name: Any) -> None:
    missing = arn.rsplit("/", 1)[0] + "/" + unique_name("missing")
    expected = (
        "ResourceNotFoundException",
        f"Requested resource not found: ResourceArn: {missing} not found",
    )
    assert each_operation(client, missing) == [expected] * 3


def test_deleted_table(client: Any, unique_name: Any) -> None:
    name = unique_name("deleted")
    arn = client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )["TableDescription"]["TableArn"]
    client.delete_table(TableName=name)
    assert {code for code, _ in each_operation(client, arn)} == {"ResourceNotFoundException"}


def test_not_an_arn(client: Any) -> None:
    expected = (
        "ValidationException",
        "One or more parameter values were invalid: ARNs must start with 'arn:': abcd",
    )
    assert each_operation(client, "abcd") == [expected] * 3


def test_not_a_dynamodb_arn(client: Any) -> None:
    other = "arn:aws:s3:::my-bucket"
    expected = (
        "ValidationException",
        f"One or more parameter values were invalid: Provided Arn is not a DynamoDB resource arn: {other}",
    )
    assert each_operation(client, other) == [expected] * 3


def test_index_arn(client: Any, arn: str) -> None:
    index_arn = arn + "/index/byOther"
    expected = (
        "ValidationException",
        "One or more parameter values were invalid: Invalid resource arn provided, only table or "
        f"stream is accepted. Provided resource arn: {index_arn}",
    )
    assert each_operation(client, index_arn) == [expected] * 3


def test_other_region(client: Any, arn: str) -> None:
    elsewhere = arn.replace(":us-east-1:", ":eu-west-1:")
    expected = (
        "ValidationException",
        f"Invalid TableArn: Invalid ResourceArn provided as input {elsewhere}",
    )
    assert each_operation(client, elsewhere) == [expected] * 3


def test_invalid_table_name_in_arn(client: Any, arn: str) -> None:
    short = arn.rsplit("/", 1)[0] + "/ab"
    expected = (
        "ValidationException",
        f"Invalid TableArn: Invalid ResourceArn provided as input {short}",
    )
    assert each_operation(client, short) == [expected] * 3


def test_missing_resource_arn(client: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.list_tags_of_resource()
    assert error_of(excinfo) == ("ValidationException", "Invalid TableArn")
    with pytest.raises(ClientError) as excinfo:
        client.tag_resource(Tags=[{"Key": "k", "Value": "v"}])
    assert error_of(excinfo) == ("ValidationException", "Invalid TableArn")
    with pytest.raises(ClientError) as excinfo:
        client.untag_resource(TagKeys=["k"])
    assert error_of(excinfo) == ("ValidationException", "Invalid TableArn")


def test_list_tags_ignores_next_token(client: Any, arn: str) -> None:
    client.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}])
    answer = client.list_tags_of_resource(ResourceArn=arn, NextToken="not-a-token")
    assert answer["Tags"] == [{"Key": "k", "Value": "v"}]
    assert "NextToken" not in answer

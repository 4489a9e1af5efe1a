"""GetItem, PutItem, UpdateItem and DeleteItem through Amazon's Python DAX
client: the same results and errors as the HTTP endpoint gives."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.dax.conftest import create_table, dax_client, unique

EVERY_TYPE = {
    "s": {"S": "text ✓"},
    "n": {"N": "-12.5"},
    "big": {"N": "12345678901234567890123456789012345678"},
    "tiny": {"N": "1E-130"},
    "b": {"B": b"\x00\x01binary"},
    "t": {"BOOL": True},
    "f": {"BOOL": False},
    "z": {"NULL": True},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]},
    "bs": {"BS": [b"x", b"y"]},
    "l": {"L": [{"S": "one"}, {"N": "2"}, {"L": []}]},
    "m": {"M": {"inner": {"M": {"deep": {"S": "d"}}}, "n": {"N": "0"}}},
    "empty": {"S": ""},
}


def normalized(item: dict[str, Any]) -> dict[str, Any]:
    """Sets compare as sets (DynamoDB keeps no order for them), numbers as
    numbers (the DAX client writes a decimal's text itself: 1E-130)."""
    out: dict[str, Any] = {}
    for name, value in item.items():
        kind, content = next(iter(value.items()))
        if kind == "N":
            out[name] = {"N": Decimal(content)}
        elif kind == "NS":
            out[name] = {kind: sorted(map(Decimal, content))}
        elif kind in ("SS", "BS"):
            out[name] = {kind: sorted(content)}
        elif kind == "M":
            out[name] = {"M": normalized(content)}
        else:
            out[name] = value
    return out


def test_a_put_item_reads_back_the_same_over_dax_and_http(dax: Any, ddb: Any, table: str) -> None:
    item = {"pk": {"S": unique()}, "sk": {"N": "-3.25"}, **EVERY_TYPE}
    dax.put_item(TableName=table, Item=item)
    key = {"pk": item["pk"], "sk": item["sk"]}
    over_dax = dax.get_item(TableName=table, Key=key)["Item"]
    over_http = ddb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    assert normalized(over_dax) == normalized(over_http) == normalized(item)


@pytest.mark.parametrize("sort", ["0", "1", "-1", "99.999", "-0.001", "1E+100", "-7E-50", "123456789012345678"])
def test_number_sort_keys_round_trip_and_keep_their_order(dax: Any, ddb: Any, sort: str) -> None:
    name = create_table(ddb)
    pk = {"S": unique()}
    for value in (sort, "5"):
        dax.put_item(TableName=name, Item={"pk": pk, "sk": {"N": value}, "v": {"S": value}})
    got = dax.get_item(TableName=name, Key={"pk": pk, "sk": {"N": sort}})["Item"]
    assert got["v"] == {"S": sort}
    over_dax = dax.query(TableName=name, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": pk}, ConsistentRead=True)["Items"]
    over_http = ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                          ExpressionAttributeValues={":p": pk})["Items"]
    assert [i["v"] for i in over_dax] == [i["v"] for i in over_http]


@pytest.mark.parametrize("hash_type,value", [("S", {"S": "k"}), ("N", {"N": "-42.5"}), ("B", {"B": b"\x01\x02"})])
def test_every_partition_key_type(dax: Any, ddb: Any, hash_type: str, value: dict[str, Any]) -> None:
    name = create_table(ddb, sort_type=None, hash_type=hash_type)
    dax.put_item(TableName=name, Item={"pk": value, "v": {"N": "1"}})
    assert dax.get_item(TableName=name, Key={"pk": value})["Item"] == {"pk": value, "v": {"N": "1"}}
    assert ddb.get_item(TableName=name, Key={"pk": value})["Item"] == {"pk": value, "v": {"N": "1"}}
    binary_sort = create_table(ddb, sort_type="B")
    dax.put_item(TableName=binary_sort, Item={"pk": {"S": "p"}, "sk": {"B": b"\xff\x00"}})
    assert "Item" in ddb.get_item(TableName=binary_sort, Key={"pk": {"S": "p"}, "sk": {"B": b"\xff\x00"}})


def test_a_missing_item_has_no_item(dax: Any, hash_table: str) -> None:
    assert "Item" not in dax.get_item(TableName=hash_table, Key={"pk": {"S": unique()}})


def test_projection_returns_the_paths_asked_for(dax: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "a": {"S": "x"}, "m": {"M": {"q": {"L": [{"N": "1"}, {"N": "2"}]}}},
                                            "other": {"S": "no"}})
    got = dax.get_item(TableName=hash_table, Key=key, ProjectionExpression="a, m.q[1], #p, missing",
                       ExpressionAttributeNames={"#p": "pk"})
    assert got["Item"] == {"a": {"S": "x"}, "m": {"M": {"q": {"L": [{"N": "2"}]}}}, "pk": key["pk"]}


def test_update_item_return_values_and_write_through(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "n": {"N": "1"}, "keep": {"S": "k"}})
    new = dax.update_item(TableName=hash_table, Key=key, UpdateExpression="SET n = n + :one, #s = :s",
                          ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":one": {"N": "1"}, ":s": {"S": "on"}},
                          ReturnValues="UPDATED_NEW")
    assert new["Attributes"] == {"n": {"N": "2"}, "status": {"S": "on"}}
    old = dax.update_item(TableName=hash_table, Key=key, UpdateExpression="REMOVE keep ADD n :one",
                          ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="ALL_OLD")
    assert old["Attributes"] == {**key, "n": {"N": "2"}, "status": {"S": "on"}, "keep": {"S": "k"}}
    expected = {**key, "n": {"N": "3"}, "status": {"S": "on"}}
    assert dax.get_item(TableName=hash_table, Key=key)["Item"] == expected
    assert ddb.get_item(TableName=hash_table, Key=key)["Item"] == expected
    assert "Attributes" not in dax.update_item(TableName=hash_table, Key=key, UpdateExpression="SET n = :one",
                                               ExpressionAttributeValues={":one": {"N": "1"}})
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["n"] == {"N": "1"}


def test_delete_item_returns_the_old_item(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "v": {"S": "1"}})
    assert dax.delete_item(TableName=hash_table, Key=key, ReturnValues="ALL_OLD")["Attributes"] == {
        **key, "v": {"S": "1"}}
    assert "Item" not in dax.get_item(TableName=hash_table, Key=key)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=key)


def test_consumed_capacity_is_dynamodbs(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    item = {**key, "big": {"S": "x" * 5000}}
    put = dax.put_item(TableName=hash_table, Item=item, ReturnConsumedCapacity="TOTAL")
    assert put["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 5.0}
    read = dax.get_item(TableName=hash_table, Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    http = ddb.get_item(TableName=hash_table, Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    assert read["ConsumedCapacity"] == http["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 2.0}


def error_of(call: Any, **arguments: Any) -> ClientError:
    with pytest.raises(ClientError) as caught:
        call(**arguments)
    return caught.value


def test_a_failed_condition_is_conditional_check_failed(dax: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "v": {"N": "1"}})
    error = error_of(dax.put_item, TableName=hash_table, Item=key, ConditionExpression="attribute_not_exists(pk)")
    assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert error.response["Error"]["Message"] == "The conditional request failed"
    error = error_of(dax.update_item, TableName=hash_table, Key=key, UpdateExpression="SET v = :two",
                     ConditionExpression="v = :zero AND (size(pk) > :zero OR NOT attribute_exists(v))",
                     ExpressionAttributeValues={":two": {"N": "2"}, ":zero": {"N": "0"}})
    assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert dax.get_item(TableName=hash_table, Key=key, ConsistentRead=True)["Item"]["v"] == {"N": "1"}
    dax.delete_item(TableName=hash_table, Key=key, ConditionExpression="v IN (:zero, :one)",
                    ExpressionAttributeValues={":zero": {"N": "0"}, ":one": {"N": "1"}})
    assert "Item" not in dax.get_item(TableName=hash_table, Key=key, ConsistentRead=True)


def test_a_missing_table_is_resource_not_found(dax: Any) -> None:
    error = error_of(dax.get_item, TableName="dax-no-such-table", Key={"pk": {"S": "a"}})
    assert error.response["Error"]["Code"] == "ResourceNotFoundException"
    assert error.response["Error"]["Message"] == "Requested resource not found"


def test_dynamodbs_validation_errors_come_through(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    error = error_of(dax.update_item, TableName=hash_table, Key=key, UpdateExpression="SET pk = :v",
                     ExpressionAttributeValues={":v": {"S": "x"}})
    assert error.response["Error"]["Code"] == "ValidationException"
    assert "This attribute is part of the key" in error.response["Error"]["Message"]
    error = error_of(dax.put_item, TableName=hash_table, Item={**key, "big": {"S": "x" * (400 * 1024)}})
    assert error.response["Error"]["Code"] == "ValidationException"
    assert "Item size has exceeded the maximum allowed size" in error.response["Error"]["Message"]
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=key)


def test_discovery_answers_with_this_node(dax_server: Any) -> None:
    for url in (dax_server.dax_url, f"localhost:{dax_server.dax_port}"):
        client = dax_client(url if "://" in url else url)
        try:
            endpoints = client._cluster._router  # the client found a route: discovery answered
            assert endpoints is not None
            assert client.get_item(TableName="dax-none", Key={"pk": {"S": "a"}}) is None
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ResourceNotFoundException"
        finally:
            client.close()


SAME_ERRORS = [
    ("get_item", {"Key": {"pk": {"S": "a"}}, "ProjectionExpression": "m, m.b"}),
    ("update_item", {"Key": {"pk": {"S": "a"}}, "UpdateExpression": "ADD s :n",
                     "ExpressionAttributeValues": {":n": {"N": "1"}}}),
    ("update_item", {"Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET m.b = :n, m = :n",
                     "ExpressionAttributeValues": {":n": {"N": "1"}}}),
    ("update_item", {"Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET #x = #y + :n",
                     "ExpressionAttributeNames": {"#x": "x", "#y": "s"}, "ExpressionAttributeValues": {":n": {"N": "1"}}}),
    ("query", {"KeyConditionExpression": "s = :n", "ExpressionAttributeValues": {":n": {"S": "1"}}}),
    ("query", {"KeyConditionExpression": "pk > :n", "ExpressionAttributeValues": {":n": {"S": "1"}}}),
    ("scan", {"Segment": 3, "TotalSegments": 2}),
    ("put_item", {"Item": {"pk": {"S": "a"}}, "ConditionExpression": "size(s) = :n",
                  "ExpressionAttributeValues": {":n": {"S": "x"}}}),
]


@pytest.mark.parametrize("operation,arguments", SAME_ERRORS, ids=[f"{op}-{n}" for n, (op, _) in enumerate(SAME_ERRORS)])
def test_the_same_errors_as_http(dax: Any, ddb: Any, hash_table: str, operation: str, arguments: dict[str, Any]) -> None:
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "a"}, "s": {"S": "x"}, "m": {"M": {"b": {"N": "1"}}}})
    over_http = error_of(getattr(ddb, operation), TableName=hash_table, **arguments).response["Error"]
    over_dax = error_of(getattr(dax, operation), TableName=hash_table, **arguments).response["Error"]
    assert (over_dax["Code"], over_dax["Message"]) == (over_http["Code"], over_http["Message"])


def test_the_resource_interface_with_python_types(dax_server: Any, ddb: Any, table: str) -> None:
    """AmazonDaxClient.resource(): boto3's Table API with Python values, over DAX."""
    import amazondax
    from boto3.dynamodb.conditions import Key

    resource = amazondax.AmazonDaxClient.resource(
        endpoint_url=dax_server.dax_url, region_name="us-east-1",
        aws_access_key_id="any", aws_secret_access_key="any")
    items = resource.Table(table)
    pk = unique()
    items.put_item(Item={"pk": pk, "sk": Decimal("1"), "name": "Ada", "tags": {"a", "b"}, "score": Decimal("9.5")})
    items.put_item(Item={"pk": pk, "sk": Decimal("2"), "nested": {"list": [1, "two", None, True]}})
    got = items.get_item(Key={"pk": pk, "sk": 1})["Item"]
    assert got == {"pk": pk, "sk": Decimal("1"), "name": "Ada", "tags": {"a", "b"}, "score": Decimal("9.5")}
    found = items.query(KeyConditionExpression=Key("pk").eq(pk) & Key("sk").gte(2))["Items"]
    assert found == [{"pk": pk, "sk": Decimal("2"), "nested": {"list": [Decimal("1"), "two", None, True]}}]
    assert ddb.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"N": "1"}})["Item"]["tags"]["SS"] in (
        ["a", "b"], ["b", "a"])


@pytest.mark.parametrize("fault,code", [
    ("ThrottlingException", "ThrottlingException"),
    ("ProvisionedThroughputExceededException", "ProvisionedThroughputExceededException"),
    ("InternalServerError", "InternalServerErrorException"),
])
def test_fault_rules_reach_dax_clients_as_their_errors(dax_server: Any, dax: Any, hash_table: str,
                                                       fault: str, code: str) -> None:
    """docs/faults.md's rules apply to DAX's requests too (they run the same
    operations), and the DAX client names the errors as DAX does."""
    key = {"pk": {"S": unique()}}
    dax_server.admin("/_dynastore/faults", {"Error": fault, "Operation": "PutItem", "TableName": hash_table,
                                            "Count": 1})
    try:
        error = error_of(dax.put_item, TableName=hash_table, Item=key)
        assert error.response["Error"]["Code"] == code
        dax.put_item(TableName=hash_table, Item=key)  # the rule is spent
    finally:
        import urllib.request

        urllib.request.urlopen(urllib.request.Request(dax_server.endpoint + "/_dynastore/faults", method="DELETE"))


def test_consumed_capacity_by_index_is_dynamodbs(dax: Any, ddb: Any) -> None:
    name = create_table(ddb, sort_type=None, ExtraDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [
                            {"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}])
    over_dax = dax.put_item(TableName=name, Item={"pk": {"S": unique()}, "g": {"S": "x"}},
                            ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    over_http = ddb.put_item(TableName=name, Item={"pk": {"S": unique()}, "g": {"S": "x"}},
                             ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert over_dax == over_http
    assert over_dax["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 1.0}}

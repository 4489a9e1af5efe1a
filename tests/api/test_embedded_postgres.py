"""``dynastore.open("postgresql://...")``: the embedded API on PostgreSQL.

The in-process clients (docs/embedded.md) work on a PostgreSQL database as
on a data directory, what they write survives closing and reopening, and a
``dynastore serve --postgres`` server on the same database is the same
store: a table or item made on one side is there on the other at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

import dynastore
from tests.api.conftest import TEST_CLIENT_CONFIG, start_server, stop_server


def key(value: str) -> dict[str, Any]:
    return {"pk": {"S": value}}


@pytest.fixture
def database_url(postgres_server: Any) -> str:
    return str(postgres_server.new_database())


@pytest.fixture
def server(database_url: str) -> Iterator[Any]:
    process, url = start_server("--postgres", database_url)
    try:
        yield boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1", aws_access_key_id="AKID",
                           aws_secret_access_key="secret", config=TEST_CLIENT_CONFIG)
    finally:
        stop_server(process)


def create(client: Any, name: str, **extra: Any) -> None:
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST", **extra)


def test_the_embedded_api_on_postgres_keeps_what_it_wrote(database_url: str) -> None:
    with dynastore.open(database_url) as db:
        client = db.client()
        create(client, "kept", StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
        client.put_item(TableName="kept", Item={**key("a"), "n": {"N": "1"}})
        client.transact_write_items(TransactItems=[{"Update": {
            "TableName": "kept", "Key": key("a"), "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}}}}])
        streams = db.streams_client()
        arn = client.describe_table(TableName="kept")["Table"]["LatestStreamArn"]
        (shard,) = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        images = [record["dynamodb"]["NewImage"]["n"]["N"]
                  for record in streams.get_records(ShardIterator=iterator)["Records"]]
        assert images == ["1", "2"]
    with dynastore.open(database_url) as db:
        assert db.client().get_item(TableName="kept", Key=key("a"), ConsistentRead=True)["Item"] == {
            **key("a"), "n": {"N": "2"}}


def test_the_embedded_api_and_a_server_share_one_database(database_url: str, server: Any) -> None:
    with dynastore.open(database_url) as db:
        embedded = db.client()
        create(embedded, "from-embedded")
        embedded.put_item(TableName="from-embedded", Item={**key("e"), "by": {"S": "embedded"}})
        assert server.get_item(TableName="from-embedded", Key=key("e"))["Item"]["by"] == {"S": "embedded"}

        create(server, "from-server")
        server.put_item(TableName="from-server", Item={**key("s"), "by": {"S": "server"}})
        assert "from-server" in embedded.list_tables()["TableNames"]
        assert embedded.get_item(TableName="from-server", Key=key("s"))["Item"]["by"] == {"S": "server"}

        # A condition decided on one side holds on the other: one winner.
        embedded.put_item(TableName="from-server", Item=key("once"), ConditionExpression="attribute_not_exists(pk)")
        with pytest.raises(server.exceptions.ConditionalCheckFailedException):
            server.put_item(TableName="from-server", Item=key("once"), ConditionExpression="attribute_not_exists(pk)")

        server.delete_table(TableName="from-embedded")
        with pytest.raises(embedded.exceptions.ResourceNotFoundException):
            embedded.describe_table(TableName="from-embedded")

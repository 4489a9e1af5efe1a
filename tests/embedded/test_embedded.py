"""The embedded database: real boto3 clients served in-process, no sockets."""

from __future__ import annotations

import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Attr, Key
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.config import Config

import dynastore

KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "N"},
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def create(client: Any, name: str = "things") -> None:
    client.create_table(TableName=name, **KEYS)


def test_client_round_trip_with_waiter_and_paginator() -> None:
    with dynastore.open() as db:
        client = db.client()
        create(client)
        client.get_waiter("table_exists").wait(TableName="things", WaiterConfig={"Delay": 1})
        for n in range(23):
            client.put_item(TableName="things", Item={"pk": {"S": "a"}, "sk": {"N": str(n)}})
        pages = list(
            client.get_paginator("query").paginate(
                TableName="things",
                KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "a"}},
                PaginationConfig={"PageSize": 5},
            )
        )
        assert len(pages) == 5
        assert [item["sk"]["N"] for page in pages for item in page["Items"]] == [str(n) for n in range(23)]


def test_resource_batch_writer_and_conditions() -> None:
    with dynastore.open() as db:
        table = db.resource().create_table(TableName="things", **KEYS)
        with table.batch_writer() as writer:
            for n in range(60):
                writer.put_item(Item={"pk": "p", "sk": n, "even": n % 2 == 0, "tags": {"x", "y"}})
        result = table.query(KeyConditionExpression=Key("pk").eq("p") & Key("sk").between(10, 19),
                             FilterExpression=Attr("even").eq(True))
        assert [item["sk"] for item in result["Items"]] == [Decimal(n) for n in range(10, 20, 2)]
        assert result["ScannedCount"] == 10
        assert result["Items"][0]["tags"] == {"x", "y"}
        with pytest.raises(table.meta.client.exceptions.ConditionalCheckFailedException):
            table.put_item(Item={"pk": "p", "sk": 1}, ConditionExpression=Attr("pk").not_exists())


def test_type_serializer_round_trip_keeps_every_type() -> None:
    serializer, deserializer = TypeSerializer(), TypeDeserializer()
    value = {
        "pk": "k", "sk": Decimal("1"),
        "big": Decimal("12345678901234567890123456789012345678"),
        "bin": b"\x00\xff", "bins": {b"a", b"b"}, "nums": {Decimal("1.5"), Decimal("-2")},
        "strs": {"a"}, "nested": {"list": [None, True, {"deep": "x"}]},
    }
    with dynastore.open() as db:
        client = db.client()
        create(client)
        client.put_item(TableName="things", Item={k: serializer.serialize(v) for k, v in value.items()})
        item = client.get_item(TableName="things", Key={"pk": {"S": "k"}, "sk": {"N": "1"}})["Item"]
        assert {k: deserializer.deserialize(v) for k, v in item.items()} == value


def test_errors_are_the_servers() -> None:
    with dynastore.open() as db:
        client = db.client()
        with pytest.raises(client.exceptions.ResourceNotFoundException):
            client.get_item(TableName="missing", Key={"pk": {"S": "a"}})
        with pytest.raises(client.exceptions.ClientError) as excinfo:
            client.create_table(TableName="ab", **KEYS)
        assert excinfo.value.response["Error"]["Code"] == "ValidationException"


def test_file_database_survives_reopen(tmp_path: Path) -> None:
    with dynastore.open(tmp_path / "db") as db:
        client = db.client()
        create(client)
        client.put_item(TableName="things", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "kept"}})
    with dynastore.open(tmp_path / "db") as db:
        item = db.client().get_item(TableName="things", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
        assert item["v"] == {"S": "kept"}


def test_databases_are_independent_and_cheap() -> None:
    dynastore.open().close()  # warm the shared botocore session once
    started = time.perf_counter()
    databases = [dynastore.open() for _ in range(20)]
    for db in databases:
        create(db.client())
    elapsed = time.perf_counter() - started
    names = [db.client().list_tables()["TableNames"] for db in databases]
    for db in databases:
        db.close()
    assert names == [["things"]] * 20
    # Loose bound (timed numbers live in bench/): 20 databases with a table each.
    assert elapsed < 20


def test_closed_database_refuses_requests() -> None:
    db = dynastore.open()
    client = db.client()
    db.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.list_tables()


def test_threads_share_one_database_without_lost_updates() -> None:
    with dynastore.open() as db:
        client = db.client()
        create(client)
        key = {"pk": {"S": "counter"}, "sk": {"N": "0"}}

        def add() -> None:
            own = db.client()
            for _ in range(25):
                own.update_item(TableName="things", Key=key, UpdateExpression="ADD n :one",
                                ExpressionAttributeValues={":one": {"N": "1"}})

        threads = [threading.Thread(target=add) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert client.get_item(TableName="things", Key=key)["Item"]["n"] == {"N": "100"}


def test_serve_exposes_the_same_database_over_http() -> None:
    with dynastore.open() as db:
        create(db.client())
        server = db.serve()
        remote = boto3.client("dynamodb", endpoint_url=server.endpoint_url, region_name="us-east-1",
                              aws_access_key_id="a", aws_secret_access_key="b")
        assert remote.list_tables()["TableNames"] == ["things"]
        remote.put_item(TableName="things", Item={"pk": {"S": "r"}, "sk": {"N": "1"}})
        assert "Item" in db.client().get_item(TableName="things", Key={"pk": {"S": "r"}, "sk": {"N": "1"}})


def test_admin_controls_are_reachable_in_process() -> None:
    with dynastore.open() as db:
        client = db.client(config=Config(retries={"total_max_attempts": 1}))
        create(client)
        status, answer = db.admin("POST", "/_dynastore/faults",
                                  {"Error": "ProvisionedThroughputExceededException", "Operation": "GetItem", "Count": 1})
        assert status == 200 and answer["Rule"]["Remaining"] == 1
        with pytest.raises(client.exceptions.ProvisionedThroughputExceededException):
            client.get_item(TableName="things", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})
        client.get_item(TableName="things", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})  # the rule is spent
        assert [rule.hits for rule in db.faults.rules()] == [1]
        db.gsi_lag_seconds = 0.25
        assert db.database.gsi_lag_seconds == 0.25


def test_throughput_model_and_metrics_from_the_embedded_api() -> None:
    with dynastore.open(throughput="enforce") as db:
        client = db.client()
        client.create_table(TableName="hot", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
        client.put_item(TableName="hot", Item={"pk": {"S": "k"}})
        metrics = db.metrics()
        assert metrics["Mode"] == "enforce"
        assert metrics["Tables"]["hot"]["WriteUnits"] == 1.0
        assert metrics["Tables"]["hot"]["WriteLimit"] == 5.0
        top = metrics["Tables"]["hot"]["ContributorInsights"]["Table"]["Rules"]["PKC"]["60m"]
        assert top == [{"Key": {"pk": {"S": "k"}}, "ConsumedUnits": 1.0}]
    with dynastore.open() as db:
        assert db.database.throughput is None  # off by default: no cost


def test_ttl_and_streams_from_the_embedded_api() -> None:
    with dynastore.open() as db:
        client = db.client()
        client.create_table(TableName="sessions", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST",
                            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        client.update_time_to_live(TableName="sessions",
                                   TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
        now = int(time.time())
        client.put_item(TableName="sessions", Item={"pk": {"S": "s1"}, "expires": {"N": str(now + 60)}})
        assert db.sweep_ttl() == 0
        db.advance_clock(120)
        assert "Item" in client.get_item(TableName="sessions", Key={"pk": {"S": "s1"}})  # not swept yet
        assert db.sweep_ttl() == 1
        assert "Item" not in client.get_item(TableName="sessions", Key={"pk": {"S": "s1"}})
        streams = db.streams_client()
        arn = client.describe_table(TableName="sessions")["Table"]["LatestStreamArn"]
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records = streams.get_records(ShardIterator=iterator)["Records"]
        assert [record["eventName"] for record in records] == ["INSERT", "REMOVE"]
        assert records[1]["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}


def test_throughput_mode_switches_while_open() -> None:
    with dynastore.open() as db:
        client = db.client(config=Config(retries={"total_max_attempts": 1}))
        client.create_table(TableName="hot", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
        assert db.set_throughput("enforce") == {"Mode": "enforce", "TableModes": {}}
        item = {"pk": {"S": "k"}, "data": {"S": "x" * 3000}}  # 3 write units each
        with pytest.raises(client.exceptions.ProvisionedThroughputExceededException):
            for _ in range(400):  # far past the bucket's burst allowance
                client.put_item(TableName="hot", Item=item)
        assert db.set_throughput("off", table_name="hot")["TableModes"] == {"hot": "off"}
        for _ in range(50):
            client.put_item(TableName="hot", Item=item)  # no longer enforced for this table
        db.set_throughput("off")
        assert db.metrics() == {"Mode": "off", "Tables": {}}
        with pytest.raises(ValueError, match="Mode must be one of"):
            db.set_throughput("sometimes")


def test_a_session_for_code_that_makes_its_own_clients() -> None:
    def application(session: Any) -> list[str]:
        """Application code that is handed a session (as dependency injection does)."""
        session.resource("dynamodb").Table("things").put_item(Item={"pk": "a", "sk": 1})
        return [table.name for table in session.resource("dynamodb").tables.all()]

    with dynastore.open() as db, dynastore.open() as other:
        create(db.client())
        assert application(db.session()) == ["things"]
        assert "Item" in db.client().get_item(TableName="things", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})
        assert other.session().client("dynamodb").list_tables()["TableNames"] == []
        assert db.session().client("dynamodbstreams").list_streams()["Streams"] == []
        client = db.session().client("dynamodb")
    with pytest.raises(RuntimeError, match="closed"):
        client.list_tables()


def test_regions_are_namespaces_of_their_own_and_survive_reopen(tmp_path: Path) -> None:
    with dynastore.open(tmp_path / "data") as db:
        east, west = db.client(), db.client(region_name="eu-west-1")
        create(west, "orders")
        west.put_item(TableName="orders", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
        assert east.list_tables()["TableNames"] == []
        assert west.describe_table(TableName="orders")["Table"]["TableArn"] == (
            "arn:aws:dynamodb:eu-west-1:000000000000:table/orders"
        )
        create(east, "orders")  # the same name in another region: another table
        assert east.scan(TableName="orders")["Count"] == 0
    with dynastore.open(tmp_path / "data") as db:
        assert db.client(region_name="eu-west-1").scan(TableName="orders")["Count"] == 1
        assert db.client().scan(TableName="orders")["Count"] == 0


def test_ttl_sweeps_reach_every_region() -> None:
    with dynastore.open() as db:
        west = db.client(region_name="ap-southeast-2")
        create(west, "sessions")
        west.update_time_to_live(TableName="sessions", TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
        west.put_item(TableName="sessions", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "ttl": {"N": str(int(time.time()) - 10)}})
        assert db.sweep_ttl() == 1
        assert west.scan(TableName="sessions")["Count"] == 0

"""authorizeConnection under --credentials: a good signature reaches its
key's namespace, a bad one is refused as DynamoDB refuses a bad key, a
readonly key may read but not write; and the DAX endpoint over PostgreSQL
(requests in greenlets, ADR 0005)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.dax.conftest import REGION, DaxServerProcess, amazondax, create_table, unique


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaxServerProcess]:
    credentials: Path = tmp_path_factory.mktemp("dax-credentials") / "keys"
    credentials.write_text("AKIDWRITER:writer-secret\nAKIDREADER:reader-secret:000000000000:readonly\n")
    server = DaxServerProcess("--credentials", str(credentials))
    yield server
    server.stop()


def client_for(server: DaxServerProcess, key: str, secret: str) -> Any:
    return amazondax.AmazonDaxClient(endpoint_url=server.dax_url, region_name=REGION, aws_access_key_id=key,
                                     aws_secret_access_key=secret,
                                     config=Config(retries={"max_attempts": 0}, connect_timeout=5))


def test_signatures_are_checked_and_readonly_keys_only_read(secured: DaxServerProcess) -> None:
    http = boto3.client("dynamodb", endpoint_url=secured.endpoint, region_name=REGION,
                        aws_access_key_id="AKIDWRITER", aws_secret_access_key="writer-secret")
    name = create_table(http, sort_type=None)
    key = {"pk": {"S": unique()}}
    writer = client_for(secured, "AKIDWRITER", "writer-secret")
    reader = client_for(secured, "AKIDREADER", "reader-secret")
    try:
        writer.put_item(TableName=name, Item={**key, "v": {"S": "w"}})
        assert reader.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "w"}
        with pytest.raises(ClientError) as caught:
            reader.put_item(TableName=name, Item={**key, "v": {"S": "r"}})
        assert caught.value.response["Error"]["Code"] == "AccessDeniedException"
        assert "AKIDREADER is not authorized to perform: dax:PutItem" in caught.value.response["Error"]["Message"]
        assert http.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "w"}
    finally:
        writer.close()
        reader.close()
    for key_id, secret in (("AKIDWRITER", "wrong-secret"), ("AKIDNOBODY", "writer-secret")):
        with pytest.raises(ClientError) as refused:
            client_for(secured, key_id, secret)  # discovery itself is refused
        assert refused.value.response["Error"]["Code"] == "UnrecognizedClientException"


@pytest.fixture(scope="module")
def on_postgres(request: pytest.FixtureRequest) -> Iterator[DaxServerProcess]:
    postgres = request.getfixturevalue("postgres_server")
    server = DaxServerProcess("--postgres", str(postgres.new_database()))
    yield server
    server.stop()


def test_the_dax_endpoint_over_postgresql(on_postgres: DaxServerProcess) -> None:
    http = boto3.client("dynamodb", endpoint_url=on_postgres.endpoint, region_name=REGION,
                        aws_access_key_id="any", aws_secret_access_key="any")
    name = create_table(http)
    dax = amazondax.AmazonDaxClient(endpoint_url=on_postgres.dax_url, region_name=REGION,
                                    aws_access_key_id="any", aws_secret_access_key="any",
                                    config=Config(retries={"max_attempts": 0}))
    try:
        pk = {"S": unique()}
        dax.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": pk, "sk": {"N": str(n)}}}}
                                                  for n in range(3)]})
        dax.update_item(TableName=name, Key={"pk": pk, "sk": {"N": "1"}}, UpdateExpression="SET v = :v",
                        ExpressionAttributeValues={":v": {"S": "x"}})
        assert dax.get_item(TableName=name, Key={"pk": pk, "sk": {"N": "1"}})["Item"]["v"] == {"S": "x"}
        http.put_item(TableName=name, Item={"pk": pk, "sk": {"N": "1"}, "v": {"S": "around"}})
        assert dax.get_item(TableName=name, Key={"pk": pk, "sk": {"N": "1"}})["Item"]["v"] == {"S": "x"}
        assert dax.query(TableName=name, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": pk}, ConsistentRead=True)["Count"] == 3
        dax.transact_write_items(TransactItems=[{"Delete": {"TableName": name, "Key": {"pk": pk, "sk": {"N": "2"}}}}])
        assert "Item" not in http.get_item(TableName=name, Key={"pk": pk, "sk": {"N": "2"}})
    finally:
        dax.close()

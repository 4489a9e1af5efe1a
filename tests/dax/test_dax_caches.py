"""DAX's caches seen from its client: the item cache (eventually consistent
GetItem, negative caching, write-through), the query cache (Query and Scan
by the whole request, not invalidated by writes), staleness after writes
made around DAX, pass-through of consistent reads, TTLs on the moved clock."""

from __future__ import annotations

from typing import Any

from tests.dax.conftest import DaxServerProcess, dax_client, unique

ITEM_TTL_SECONDS = 300


def advance_clock(server: DaxServerProcess, seconds: float) -> None:
    server.admin("/_dynastore/clock", {"advance_seconds": seconds})


def test_a_write_around_dax_leaves_a_stale_item_until_its_ttl(
    dax: Any, ddb: Any, dax_server: DaxServerProcess, hash_table: str
) -> None:
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "v": {"S": "old"}})
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "old"}
    ddb.put_item(TableName=hash_table, Item={**key, "v": {"S": "new"}})  # around DAX
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "old"}
    assert dax.get_item(TableName=hash_table, Key=key, ConsistentRead=True)["Item"]["v"] == {"S": "new"}
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "old"}  # consistent reads cache nothing
    advance_clock(dax_server, ITEM_TTL_SECONDS - 10)
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "old"}
    advance_clock(dax_server, 11)
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "new"}


def test_a_miss_is_cached_too(dax: Any, ddb: Any, dax_server: DaxServerProcess, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    assert "Item" not in dax.get_item(TableName=hash_table, Key=key)
    ddb.put_item(TableName=hash_table, Item={**key, "v": {"S": "there"}})
    assert "Item" not in dax.get_item(TableName=hash_table, Key=key)
    assert dax.get_item(TableName=hash_table, Key=key, ConsistentRead=True)["Item"]["v"] == {"S": "there"}
    advance_clock(dax_server, ITEM_TTL_SECONDS + 1)
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "there"}


def test_writes_through_dax_update_the_item_cache(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    assert "Item" not in dax.get_item(TableName=hash_table, Key=key)  # a cached miss
    dax.put_item(TableName=hash_table, Item={**key, "v": {"N": "01.50"}})
    assert dax.get_item(TableName=hash_table, Key=key)["Item"] == {**key, "v": {"N": "1.5"}}
    dax.update_item(TableName=hash_table, Key=key, UpdateExpression="SET v = v + :one",
                    ExpressionAttributeValues={":one": {"N": "1"}})
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"N": "2.5"}
    dax.update_item(TableName=hash_table, Key=key, UpdateExpression="SET w = :w",
                    ExpressionAttributeValues={":w": {"S": "x"}}, ReturnValues="UPDATED_OLD")
    assert dax.get_item(TableName=hash_table, Key=key)["Item"] == {**key, "v": {"N": "2.5"}, "w": {"S": "x"}}
    ddb.put_item(TableName=hash_table, Item={**key, "v": {"S": "around"}})
    dax.delete_item(TableName=hash_table, Key=key)
    assert "Item" not in dax.get_item(TableName=hash_table, Key=key)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=key)


def test_a_failed_write_changes_no_cache(dax: Any, ddb: Any, hash_table: str) -> None:
    key = {"pk": {"S": unique()}}
    dax.put_item(TableName=hash_table, Item={**key, "v": {"S": "kept"}})
    try:
        dax.put_item(TableName=hash_table, Item={**key, "v": {"S": "refused"}},
                     ConditionExpression="attribute_not_exists(pk)")
    except Exception as error:  # noqa: BLE001 - ClientError from the DAX client
        assert "ConditionalCheckFailed" in str(error)
    assert dax.get_item(TableName=hash_table, Key=key)["Item"]["v"] == {"S": "kept"}


def test_the_query_cache_is_not_invalidated_by_writes(
    dax: Any, ddb: Any, dax_server: DaxServerProcess, table: str
) -> None:
    pk = {"S": unique()}
    dax.put_item(TableName=table, Item={"pk": pk, "sk": {"N": "1"}})
    asked = {"TableName": table, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": pk}}
    assert dax.query(**asked)["Count"] == 1
    dax.put_item(TableName=table, Item={"pk": pk, "sk": {"N": "2"}})  # through DAX, still stale
    ddb.put_item(TableName=table, Item={"pk": pk, "sk": {"N": "3"}})
    assert dax.query(**asked)["Count"] == 1
    assert dax.query(**asked, ConsistentRead=True)["Count"] == 3
    assert dax.query(**asked, Limit=10)["Count"] == 3  # another request: another entry
    assert dax.scan(TableName=table)["Count"] == 3
    dax.delete_item(TableName=table, Key={"pk": pk, "sk": {"N": "3"}})
    assert dax.scan(TableName=table)["Count"] == 3
    assert dax.query(**asked)["Count"] == 1
    advance_clock(dax_server, 301)
    assert dax.query(**asked)["Count"] == 2
    assert dax.scan(TableName=table)["Count"] == 2


def test_ttls_follow_the_options_and_zero_turns_a_cache_off() -> None:
    server = DaxServerProcess("--dax-item-ttl-ms", "2000", "--dax-query-ttl-ms", "0")
    import boto3
    from botocore.config import Config

    ddb = boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                       aws_access_key_id="any", aws_secret_access_key="any",
                       config=Config(retries={"max_attempts": 0}))
    dax = dax_client(server.dax_url)
    try:
        from tests.dax.conftest import create_table

        name = create_table(ddb)
        key = {"pk": {"S": "p"}, "sk": {"N": "1"}}
        dax.put_item(TableName=name, Item={**key, "v": {"S": "a"}})
        assert dax.query(TableName=name, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": key["pk"]})["Count"] == 1
        ddb.put_item(TableName=name, Item={**key, "v": {"S": "b"}})
        ddb.put_item(TableName=name, Item={"pk": key["pk"], "sk": {"N": "2"}})
        assert dax.query(TableName=name, KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": key["pk"]})["Count"] == 2  # no query cache
        assert dax.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "a"}
        advance_clock(server, 2.5)
        assert dax.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "b"}
    finally:
        dax.close()
        server.stop()


def test_an_item_ttl_of_zero_keeps_items_until_the_lru_evicts_them() -> None:
    server = DaxServerProcess("--dax-item-ttl-ms", "0")
    import boto3
    from botocore.config import Config

    ddb = boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                       aws_access_key_id="any", aws_secret_access_key="any",
                       config=Config(retries={"max_attempts": 0}))
    dax = dax_client(server.dax_url)
    try:
        from tests.dax.conftest import create_table

        name = create_table(ddb, sort_type=None)
        key = {"pk": {"S": "p"}}
        dax.put_item(TableName=name, Item={**key, "v": {"S": "a"}})
        ddb.put_item(TableName=name, Item={**key, "v": {"S": "b"}})
        advance_clock(server, 30 * 24 * 3600)
        assert dax.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "a"}
        assert server.admin("/_dynastore/dax")["itemCache"]["ttlMs"] == 0
    finally:
        dax.close()
        server.stop()

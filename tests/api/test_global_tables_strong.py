"""Multi-region strong consistency (issue 20): MultiRegionConsistency STRONG,
born complete with exactly three regions (two replicas, or one and a
witness), frozen afterwards, dissolved in one call; a strongly consistent
read in any region sees the latest write of every region; a write racing
another region's gets ReplicatedWriteConflictException; transactions,
LSIs, TTL and a change of mode are refused.

The creation and membership messages are DynamoDB's as measured live
(ack-api-quirks DDB-TABLE-202/257/258/260/261); those for transactions,
LSIs, TTL and a table with items are dynastore's wording
(docs/compatibility.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of
from tests.api.test_global_tables import (
    EAST,
    WEST,
    add_replica,
    global_table,
    regional,
    wait_active,
)
from tests.api.test_global_tables_replication import admin, advance, item

__all__ = ["global_table", "regional"]  # fixtures, shared with test_global_tables.py

pytestmark = pytest.mark.one_server  # the conflict window, lags and the clock are the first server's
OHIO = "us-east-2"
STRONG_CREATES = [{"Create": {"RegionName": OHIO}}, {"Create": {"RegionName": WEST}}]


def refused(call: Any, **arguments: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**arguments)
    return error_of(excinfo)


def make_strong(regional: Callable[[str], Any], name: str, witness: bool = False) -> dict[str, Any]:
    east = regional(EAST)
    if witness:
        answer = east.update_table(TableName=name, MultiRegionConsistency="STRONG",
                                   ReplicaUpdates=[{"Create": {"RegionName": WEST}}],
                                   GlobalTableWitnessUpdates=[{"Create": {"RegionName": OHIO}}])
    else:
        answer = east.update_table(TableName=name, MultiRegionConsistency="STRONG", ReplicaUpdates=STRONG_CREATES)
    for region in (WEST,) if witness else (OHIO, WEST):
        wait_active(east, name, region)
        wait_active(regional(region), name)
    return dict(answer["TableDescription"])


def dissolve(regional: Callable[[str], Any], name: str, witness: bool = False) -> None:
    if witness:
        regional(EAST).update_table(TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}],
                                    GlobalTableWitnessUpdates=[{"Delete": {"RegionName": OHIO}}])
    else:
        regional(EAST).update_table(TableName=name, ReplicaUpdates=[
            {"Delete": {"RegionName": OHIO}}, {"Delete": {"RegionName": WEST}}])


def test_a_strong_table_is_born_with_three_regions(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table()
    answer = make_strong(regional, name)
    assert answer["MultiRegionConsistency"] == "STRONG" and answer["GlobalTableVersion"] == "2019.11.21"
    assert answer["TableStatus"] == "UPDATING"
    for region, others in ((EAST, [OHIO, WEST]), (OHIO, [EAST, WEST]), (WEST, [EAST, OHIO])):
        table = regional(region).describe_table(TableName=name)["Table"]
        assert table["MultiRegionConsistency"] == "STRONG"
        assert sorted(replica["RegionName"] for replica in table["Replicas"]) == others
        assert "GlobalTableWitnesses" not in table
    dissolve(regional, name)
    table = wait_active(regional(EAST), name)
    for member in ("Replicas", "MultiRegionConsistency", "GlobalTableVersion", "GlobalTableWitnesses"):
        assert member not in table
    assert refused(regional(WEST).describe_table, TableName=name)[0] == "ResourceNotFoundException"


def test_a_witness_makes_the_third_region(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table()
    make_strong(regional, name, witness=True)
    table = regional(EAST).describe_table(TableName=name)["Table"]
    assert table["GlobalTableWitnesses"] == [{"RegionName": OHIO, "WitnessStatus": "ACTIVE"}]
    assert [replica["RegionName"] for replica in table["Replicas"]] == [WEST]
    assert refused(regional(OHIO).describe_table, TableName=name)[0] == "ResourceNotFoundException"  # no table there
    # The witness must go with the replicas, and only a witness of the table can be named.
    assert refused(regional(EAST).update_table, TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}]) == (
        "ValidationException", "Update table delete operation does not include all witnesses.")
    assert refused(regional(EAST).update_table, TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}],
                   GlobalTableWitnessUpdates=[{"Delete": {"RegionName": "eu-west-1"}}]) == ("ValidationException", (
                       "Update global table operation failed because one or more witnesses were not part of the "
                       "global table. Please retry the request without these witnesses: [eu-west-1]."))
    dissolve(regional, name, witness=True)
    assert "GlobalTableWitnesses" not in wait_active(regional(EAST), name)


def test_the_creation_rules(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table()
    update = regional(EAST).update_table
    count = ("ValidationException", "Unsupported replica count for global tables with MultiRegionConsistency set to STRONG.")
    assert refused(update, TableName=name, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Create": {"RegionName": WEST}}]) == count
    assert refused(update, TableName=name, ReplicaUpdates=[{"Create": {"RegionName": WEST}}],
                   GlobalTableWitnessUpdates=[{"Create": {"RegionName": OHIO}}]) == ("ValidationException", (
                       "MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates parameter is present."))
    assert refused(update, TableName=name, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Create": {"RegionName": WEST}}],
                   GlobalTableWitnessUpdates=[{"Create": {"RegionName": WEST}}]) == (
        "ValidationException", "Cannot target multiple regions with the same action")
    assert refused(update, TableName=name, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Create": {"RegionName": WEST}}],
                   GlobalTableWitnessUpdates=[{"Create": {"RegionName": EAST}}]) == ("ValidationException", (
                       "Cannot add a witness in the same region as an existing replica when creating a global table "
                       "with MultiRegionConsistency set to STRONG."))
    assert refused(update, TableName=name, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Create": {"RegionName": "us-west-1"}}, {"Create": {"RegionName": WEST}}]) == (
        "ValidationException",
        "Unsupported Region(s) specified for global tables with MultiRegionConsistency set to STRONG: [us-west-1].")
    assert refused(update, TableName=name, ReplicaUpdates=STRONG_CREATES) == (
        "ValidationException", "Update table operation with more than one create or delete replica actions not allowed")
    assert "Replicas" not in regional(EAST).describe_table(TableName=name)["Table"]


def test_what_a_strong_table_cannot_have(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    east = regional(EAST)
    with_items = global_table()
    east.put_item(TableName=with_items, Item={"pk": {"S": "x"}})
    assert refused(east.update_table, TableName=with_items, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=STRONG_CREATES) == ("ValidationException", (
                       "The table must be empty to create a global table with MultiRegionConsistency set to STRONG."))
    with_ttl = global_table()
    east.update_time_to_live(TableName=with_ttl, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
    assert refused(east.update_table, TableName=with_ttl, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=STRONG_CREATES) == (
        "ValidationException", "Time to Live is not supported for global tables with MultiRegionConsistency set to STRONG.")
    with_lsi = global_table(
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "other", "AttributeType": "S"}],
        LocalSecondaryIndexes=[{"IndexName": "by-other", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "other", "KeyType": "RANGE"}]}],
    )
    assert refused(east.update_table, TableName=with_lsi, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=STRONG_CREATES) == ("ValidationException", (
                       "Local secondary indexes is not supported for global tables with MultiRegionConsistency set "
                       "to STRONG."))
    eventual = global_table()
    add_replica(regional, eventual, WEST)
    assert refused(east.update_table, TableName=eventual, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Create": {"RegionName": OHIO}}],
                   GlobalTableWitnessUpdates=[{"Create": {"RegionName": "eu-west-1"}}]) == (
        "ValidationException", "MultiRegionConsistency parameter is unsupported on existing global table")


def test_a_strong_table_is_frozen(regional: Callable[[str], Any], global_table: Callable[..., str]) -> None:
    name = global_table()
    make_strong(regional, name)
    east = regional(EAST)
    assert refused(east.update_table, TableName=name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}]) == (
        "ValidationException", "Cannot add replicas to a global table with strong MultiRegionConsistency")
    assert refused(east.update_table, TableName=name, MultiRegionConsistency="EVENTUAL",
                   ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}]) == (
        "ValidationException", "MultiRegionConsistency parameter is unsupported on existing global table")
    assert refused(east.update_table, TableName=name, MultiRegionConsistency="STRONG",
                   ReplicaUpdates=[{"Delete": {"RegionName": WEST}}]) == (
        "ValidationException", "Only Replica Create actions are supported when MultiRegionConsistency parameter is provided.")
    only_one = ("ValidationException", (
        "Deletion of only one table replica is not supported for global tables with MultiRegionConsistency set to STRONG."))
    assert refused(east.update_table, TableName=name, ReplicaUpdates=[{"Delete": {"RegionName": WEST}}]) == only_one
    assert refused(regional(WEST).delete_table, TableName=name) == only_one
    # Transactions and TTL are refused on it.
    transactions = ("ValidationException", "Transactions are not supported on tables with MultiRegionConsistency set to STRONG.")
    assert refused(east.transact_write_items, TransactItems=[
        {"Put": {"TableName": name, "Item": {"pk": {"S": "a"}}}}]) == transactions
    assert refused(east.transact_get_items, TransactItems=[
        {"Get": {"TableName": name, "Key": {"pk": {"S": "a"}}}}]) == transactions
    assert refused(east.update_time_to_live, TableName=name,
                   TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"}) == (
        "ValidationException", "Time to Live is not supported for global tables with MultiRegionConsistency set to STRONG.")
    dissolve(regional, name)


def test_a_strongly_consistent_read_anywhere_sees_the_latest_write(
    endpoint: str, regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    make_strong(regional, name)
    admin(endpoint, "/_dynastore/replication", {"lag_ms": 60000, "from": EAST, "to": WEST})  # EVENTUAL's lag only
    try:
        regional(EAST).put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "east"}})
        for region in (WEST, OHIO):
            assert item(regional(region), name, "k") == {"pk": {"S": "k"}, "v": {"S": "east"}}
    finally:
        admin(endpoint, "/_dynastore/replication", {"lag_ms": None, "from": EAST, "to": WEST})
        dissolve(regional, name)


def test_a_write_racing_another_regions_conflicts(
    endpoint: str, regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    make_strong(regional, name)
    admin(endpoint, "/_dynastore/replication", {"conflict_window_ms": 1000})
    try:
        regional(EAST).put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "east"}})
        assert refused(regional(WEST).put_item, TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "west"}}) == (
            "ReplicatedWriteConflictException",
            "One or more items in this request are being modified by a request in another Region.")
        regional(EAST).put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "east again"}})  # its own region: fine
        advance(endpoint, 1.5)
        regional(WEST).put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "west"}})  # the retry succeeds
        assert item(regional(EAST), name, "k") == {"pk": {"S": "k"}, "v": {"S": "west"}}
    finally:
        admin(endpoint, "/_dynastore/replication", {"conflict_window_ms": 100})
        dissolve(regional, name)


def test_a_region_cut_off_has_no_quorum(
    endpoint: str, regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    """A paused region of a STRONG table cannot reach a quorum: its writes and
    strongly consistent reads fail (InternalServerError, retried by the SDKs),
    its eventually consistent reads are served stale; the two regions left
    keep the quorum, and the cut-off region catches up when resumed."""
    name = global_table()
    make_strong(regional, name)
    east, ohio, west = regional(EAST), regional(OHIO), regional(WEST)
    no_quorum = ("InternalServerError", "Internal server error")
    east.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "one"}})
    assert item(west, name, "k") == {"pk": {"S": "k"}, "v": {"S": "one"}}
    advance(endpoint, 1)  # past the conflict window
    admin(endpoint, "/_dynastore/replication", {"pause": WEST})
    try:
        assert refused(west.put_item, TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "west"}}) == no_quorum
        assert refused(west.delete_item, TableName=name, Key={"pk": {"S": "k"}}) == no_quorum
        assert refused(west.get_item, TableName=name, Key={"pk": {"S": "k"}}, ConsistentRead=True) == no_quorum
        assert refused(west.query, TableName=name, KeyConditionExpression="pk = :k",
                       ExpressionAttributeValues={":k": {"S": "k"}}, ConsistentRead=True) == no_quorum
        assert refused(west.batch_get_item, RequestItems={
            name: {"Keys": [{"pk": {"S": "k"}}], "ConsistentRead": True}}) == no_quorum
        # The majority side goes on; the cut-off side serves what it had, eventually consistent.
        east.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "two"}})
        assert item(ohio, name, "k") == {"pk": {"S": "k"}, "v": {"S": "two"}}
        assert item(west, name, "k", consistent=False) == {"pk": {"S": "k"}, "v": {"S": "one"}}
        admin(endpoint, "/_dynastore/replication", {"pause": OHIO})  # two regions cut off: none has a quorum
        assert refused(east.put_item, TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "three"}}) == no_quorum
        admin(endpoint, "/_dynastore/replication", {"resume": OHIO})
    finally:
        admin(endpoint, "/_dynastore/replication", {"resume": WEST})
        admin(endpoint, "/_dynastore/replication", {"resume": OHIO})
    assert item(west, name, "k") == {"pk": {"S": "k"}, "v": {"S": "two"}}
    advance(endpoint, 1)
    west.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "west"}})
    assert item(east, name, "k") == {"pk": {"S": "k"}, "v": {"S": "west"}}
    dissolve(regional, name)


def test_a_paused_witness_leaves_the_two_replicas_a_quorum(
    endpoint: str, regional: Callable[[str], Any], global_table: Callable[..., str]
) -> None:
    name = global_table()
    make_strong(regional, name, witness=True)
    admin(endpoint, "/_dynastore/replication", {"pause": OHIO})
    try:
        regional(EAST).put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "east"}})
        assert item(regional(WEST), name, "k") == {"pk": {"S": "k"}, "v": {"S": "east"}}
    finally:
        admin(endpoint, "/_dynastore/replication", {"resume": OHIO})
        dissolve(regional, name, witness=True)

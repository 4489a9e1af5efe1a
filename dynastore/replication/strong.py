"""Multi-region strong consistency (MRSC): MultiRegionConsistency STRONG.

A STRONG global table is born complete in one UpdateTable: exactly three
regions, this one and two replica Creates, or one Create and a witness
(GlobalTableWitnessUpdates). Its membership and mode are frozen afterwards;
it is dissolved by one UpdateTable deleting every other replica and the
witness. Its writes reach the other replicas before any later request
anywhere is answered (their queue rows are due at once, whatever the lag or
a pause), so a strongly consistent read in any region sees the latest write
of every region. A write to an item another region wrote less than the
conflict window ago (``/_dynastore/replication`` ``conflict_window_ms``,
default ``CONFLICT_WINDOW_MS`` on the database clock) is refused with
ReplicatedWriteConflictException, as DynamoDB refuses a write racing one
in flight in another region; the SDKs retry it.

A region cut off by a partition (``/_dynastore/replication`` ``pause``)
cannot reach a quorum: it and the regions it still reaches (replicas and
witness, a paused one reaching none) must be at least two of the three.
Without it a write to a STRONG table, or a strongly consistent read of one,
fails with InternalServerError (HTTP 500, which the SDKs retry) while
eventually consistent reads are served from the local replica, stale; the
two regions left keep their quorum and go on. The writes they make reach
the cut-off region when it is resumed. (The developer guide says an
isolated MRSC replica serves no writes and no strongly consistent reads;
the error code is not documented: docs/compatibility.md.)

The messages of the creation and membership rules are DynamoDB's as
measured live (ack-api-quirks DDB-TABLE-202/257/258/260/261). Those for
what a STRONG table does not support (transactions, local secondary
indexes, TTL, an existing table's items) are worded by dynastore: no
capture of the service's wording was found (docs/compatibility.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore.engine.ttl import enabled_attribute
from dynastore.errors import (
    InternalServerError,
    ReplicatedWriteConflictException,
    ValidationException,
)
from dynastore.replication.replicas import STRONG, replica_set

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema
    from dynastore.replication.replica_updates import ReplicaAction
    from dynastore.replication.replicas import ReplicaSet

STRONG_REGIONS = (
    "us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1",
    "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
)
"""Regions a STRONG table may use (us-west-1, for one, may not: DDB-TABLE-202)."""
STRONG_REGION_COUNT = 3
CONFLICT_WINDOW_MS = 100

NOT_SUPPORTED = "is not supported for global tables with MultiRegionConsistency set to STRONG"


def is_strong(schema: TableSchema | None) -> bool:
    replicas = replica_set(schema) if schema is not None else None
    return replicas is not None and replicas.consistency == STRONG


def witness_actions(request: dict[str, Any]) -> list[tuple[str, str]]:
    """GlobalTableWitnessUpdates as (Create|Delete, region)."""
    actions = []
    for element in request.get("GlobalTableWitnessUpdates") or ():
        for kind in ("Create", "Delete"):
            if isinstance(element, dict) and isinstance(element.get(kind), dict):
                actions.append((kind, str(element[kind].get("RegionName"))))
    return actions


def check_request(
    database: Database, schema: TableSchema, request: dict[str, Any], actions: list[ReplicaAction]
) -> bool:
    """The STRONG rules for an UpdateTable with ReplicaUpdates; True when it
    creates a STRONG table. Raises DynamoDB's ValidationException."""
    mode = request.get("MultiRegionConsistency")
    witnesses = witness_actions(request)
    current = replica_set(schema)
    if current is not None and current.consistency == STRONG:  # its dissolution names its witness
        _check_strong_table_change(current, mode, actions, witnesses)
        return False
    if witnesses and mode != STRONG:
        raise ValidationException(
            "MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates parameter is present."
        )
    if mode != STRONG:
        return False
    if any(action.kind != "Create" for action in actions):
        raise ValidationException("Only Replica Create actions are supported when MultiRegionConsistency parameter is provided.")
    created = [action.region for action in actions]
    witness_regions = [region for kind, region in witnesses if kind == "Create"]
    if 1 + len(created) + len(witness_regions) != STRONG_REGION_COUNT:
        raise ValidationException("Unsupported replica count for global tables with MultiRegionConsistency set to STRONG.")
    if set(witness_regions) & set(created):
        raise ValidationException("Cannot target multiple regions with the same action")
    if database.region in witness_regions:
        raise ValidationException(
            "Cannot add a witness in the same region as an existing replica when creating a global table "
            "with MultiRegionConsistency set to STRONG."
        )
    unsupported = [region for region in (database.region, *created, *witness_regions) if region not in STRONG_REGIONS]
    if unsupported:
        raise ValidationException(
            "Unsupported Region(s) specified for global tables with MultiRegionConsistency set to STRONG: "
            f"[{', '.join(unsupported)}]."
        )
    if current is not None:
        raise ValidationException("MultiRegionConsistency parameter is unsupported on existing global table")
    _check_table_can_be_strong(database, schema)
    return True


def _check_strong_table_change(
    current: ReplicaSet, mode: Any, actions: list[ReplicaAction], witnesses: list[tuple[str, str]]
) -> None:
    if mode == STRONG and actions and all(action.kind == "Create" for action in actions):
        raise ValidationException("Unsupported replica count for global tables with MultiRegionConsistency set to STRONG.")
    if mode is not None:
        if mode == STRONG:
            raise ValidationException(
                "Only Replica Create actions are supported when MultiRegionConsistency parameter is provided."
            )
        raise ValidationException("MultiRegionConsistency parameter is unsupported on existing global table")
    if any(action.kind == "Create" for action in actions):
        raise ValidationException("Cannot add replicas to a global table with strong MultiRegionConsistency")
    deleted = {action.region for action in actions if action.kind == "Delete"}
    if not deleted:
        return
    strangers = [region for kind, region in witnesses if kind == "Delete" and region not in current.witnesses]
    if strangers:
        raise ValidationException(
            "Update global table operation failed because one or more witnesses were not part of the global "
            f"table. Please retry the request without these witnesses: [{', '.join(strangers)}]."
        )
    if current.witnesses and not set(current.witnesses) <= {region for kind, region in witnesses if kind == "Delete"}:
        raise ValidationException("Update table delete operation does not include all witnesses.")
    members = {replica.region for replica in current.replicas}
    if len(members - deleted) != 1:
        raise ValidationException(
            "Deletion of only one table replica is not supported for global tables with MultiRegionConsistency "
            "set to STRONG."
        )


def _check_table_can_be_strong(database: Database, schema: TableSchema) -> None:
    if schema.local_indexes:
        raise ValidationException(f"Local secondary indexes {NOT_SUPPORTED}.")
    if enabled_attribute(schema.extensions) is not None:
        raise ValidationException(f"Time to Live {NOT_SUPPORTED}.")
    if database.table_statistics(schema)[0] > 0:
        raise ValidationException(
            "The table must be empty to create a global table with MultiRegionConsistency set to STRONG."
        )


def check_table_deletion(schema: TableSchema) -> None:
    """DeleteTable of one member of a STRONG table."""
    if is_strong(schema):
        raise ValidationException(
            "Deletion of only one table replica is not supported for global tables with MultiRegionConsistency "
            "set to STRONG."
        )


def check_transaction(schemas: list[TableSchema]) -> None:
    """TransactWriteItems / TransactGetItems on a STRONG table."""
    if any(is_strong(schema) for schema in schemas):
        raise ValidationException("Transactions are not supported on tables with MultiRegionConsistency set to STRONG.")


def check_time_to_live(schema: TableSchema, enabling: bool) -> None:
    if enabling and is_strong(schema):
        raise ValidationException(f"Time to Live {NOT_SUPPORTED}.")


def check_conflict(database: Database, previous: Any, now: float) -> None:
    """A write racing one another region made within the conflict window."""
    replicator = database.replication
    window = (replicator.conflict_window_seconds if replicator is not None else CONFLICT_WINDOW_MS / 1000)
    if previous is not None and previous.region != database.region and now - previous.timestamp < window:
        raise ReplicatedWriteConflictException()



def has_quorum(database: Database, replicas: ReplicaSet) -> bool:
    """Whether ``database``'s region reaches a majority of a STRONG table's
    members (replicas and witness) through the partitions set now."""
    replicator = database.replication
    paused = replicator.paused if replicator is not None else set()
    if not paused:
        return True
    if database.region in paused:
        return False  # isolated: itself only
    members = {*replicas.regions, *replicas.witnesses}
    reached = [region for region in members if region not in paused]
    return 2 * len(reached) > len(members)


def check_quorum(database: Database, replicas: ReplicaSet) -> None:
    if not has_quorum(database, replicas):
        raise InternalServerError()


STRONG_READS = ("GetItem", "Query", "Scan", "BatchGetItem")


def check_strong_read(database: Database, operation: str, request: dict[str, Any]) -> None:
    """A strongly consistent read of a STRONG table from a region without a
    quorum (ops.dispatch calls it while a region is paused)."""
    if operation not in STRONG_READS:
        return
    if operation == "BatchGetItem":
        items = request.get("RequestItems")
        names = [name for name, entry in items.items() if isinstance(entry, dict) and entry.get("ConsistentRead")
                 ] if isinstance(items, dict) else []
    else:
        names = [request.get("TableName")] if request.get("ConsistentRead") is True else []
    for name in names:
        schema = database.tables.get(name) if isinstance(name, str) else None
        replicas = replica_set(schema) if schema is not None else None
        if replicas is not None and replicas.consistency == STRONG:
            check_quorum(database, replicas)

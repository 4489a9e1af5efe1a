"""UpdateTableReplicaAutoScaling: a global table's auto-scaling settings,
kept and shown by DescribeTableReplicaAutoScaling (legacy.py).

dynastore scales nothing: the settings are stored in each member's
definition (``extensions["replica_auto_scaling"]``) and echoed, so code and
infrastructure tools that set and read them work. As the API reference
describes the call (and the AutoScalingSettingsUpdate shape):

- ``ProvisionedWriteCapacityAutoScalingUpdate`` and each
  ``GlobalSecondaryIndexUpdates`` entry's write settings apply to every
  replica (write capacity is the global table's);
- ``ReplicaUpdates`` set one replica's read settings and its GSIs' read
  settings (a region that is no member: the not-a-member refusal of
  ReplicaUpdates);
- an index the table does not have is ResourceNotFoundException;
- an update merges into what is stored: MinimumUnits, MaximumUnits,
  AutoScalingDisabled, AutoScalingRoleArn and one target-tracking scaling
  policy (PolicyName, TargetValue, ScaleInCooldown, ScaleOutCooldown,
  DisableScaleIn).

The service model checks the types and bounds (a unit count >= 1, a
TargetValue given). The semantic refusals are worded by dynastore (no
capture of the service's was found: docs/compatibility.md): a minimum above
the maximum, a TargetValue outside the API reference's range, a table in on-demand
mode (auto scaling manages
provisioned capacity only).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynastore.errors import ResourceNotFoundException, invalid_parameter
from dynastore.replication.replicas import replica_set

if TYPE_CHECKING:
    from dynastore.database import Database
    from dynastore.engine.schema import TableSchema

AUTO_SCALING_EXTENSION = "replica_auto_scaling"
TARGET_VALUE_RANGE = (8.515920e-109, 1.174271e108)
"""TargetTrackingScalingPolicyConfiguration's TargetValue, as the API reference bounds it."""
SETTINGS = ("MinimumUnits", "MaximumUnits", "AutoScalingDisabled", "AutoScalingRoleArn")
POLICY_SETTINGS = ("DisableScaleIn", "ScaleInCooldown", "ScaleOutCooldown", "TargetValue")


def service_role_arn(database: Database) -> str:
    """The service-linked role DynamoDB's auto scaling uses when none is given."""
    return (f"arn:aws:iam::{database.account_id}:role/aws-service-role/dynamodb.application-autoscaling."
            "amazonaws.com/AWSServiceRoleForApplicationAutoScaling_DynamoDBTable")


def stored(schema: TableSchema) -> dict[str, Any]:
    """The member's settings: {"read": ..., "write": ..., "indexes": {name: {"read", "write"}}}."""
    value = schema.extensions.get(AUTO_SCALING_EXTENSION)
    return dict(value) if isinstance(value, dict) else {}


def _check(update: Any, what: str) -> None:
    if not isinstance(update, dict):
        return
    low, high = update.get("MinimumUnits"), update.get("MaximumUnits")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        raise invalid_parameter(f"{what}: MinimumUnits ({low}) must not be greater than MaximumUnits ({high})")
    policy = update.get("ScalingPolicyUpdate")
    target = ((policy or {}).get("TargetTrackingScalingPolicyConfiguration") or {}).get("TargetValue")
    if isinstance(target, int | float) and not TARGET_VALUE_RANGE[0] <= float(target) <= TARGET_VALUE_RANGE[1]:
        raise invalid_parameter(
            f"{what}: TargetValue must be between {TARGET_VALUE_RANGE[0]:e} and {TARGET_VALUE_RANGE[1]:e}"
        )


def merged(database: Database, schema: TableSchema, current: dict[str, Any] | None, update: dict[str, Any],
           kind: str) -> dict[str, Any]:
    """An AutoScalingSettingsDescription: ``current`` with ``update`` applied."""
    settings: dict[str, Any] = dict(current or {})
    for name in SETTINGS:
        if update.get(name) is not None:
            settings[name] = update[name]
    settings.setdefault("AutoScalingDisabled", False)
    settings.setdefault("AutoScalingRoleArn", service_role_arn(database))
    policy = update.get("ScalingPolicyUpdate")
    if isinstance(policy, dict):
        policies = settings.get("ScalingPolicies") or [{}]
        entry = dict(policies[0])
        entry["PolicyName"] = policy.get("PolicyName") or entry.get("PolicyName") or (
            f"DynamoDB{kind}CapacityUtilization:table/{schema.name}")
        configuration = dict(entry.get("TargetTrackingScalingPolicyConfiguration") or {})
        for name in POLICY_SETTINGS:
            value = (policy.get("TargetTrackingScalingPolicyConfiguration") or {}).get(name)
            if value is not None:
                configuration[name] = value
        entry["TargetTrackingScalingPolicyConfiguration"] = configuration
        settings["ScalingPolicies"] = [entry]
    return settings


def update_table_replica_auto_scaling(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    from dynastore.engine.table_settings import PAY_PER_REQUEST
    from dynastore.replication.legacy import describe_table_replica_auto_scaling
    from dynastore.replication.replica_updates import (
        _not_members,
        region_database,
        replica_set_lock,
    )

    name = request.get("TableName")
    schema = database.tables.get(name) if isinstance(name, str) else None
    replicas = replica_set(schema) if schema is not None else None
    if schema is None or replicas is None:
        raise ResourceNotFoundException(f"Global table with name: '{name}' does not exist.")
    write = request.get("ProvisionedWriteCapacityAutoScalingUpdate")
    index_writes = [entry for entry in request.get("GlobalSecondaryIndexUpdates") or () if isinstance(entry, dict)]
    replica_updates = [entry for entry in request.get("ReplicaUpdates") or () if isinstance(entry, dict)]
    index_names = {index.name for index in schema.global_indexes}
    _check(write, "ProvisionedWriteCapacityAutoScalingUpdate")
    for entry in index_writes:
        if entry.get("IndexName") not in index_names:
            raise ResourceNotFoundException(f"Requested resource not found: Index: {entry.get('IndexName')} not found")
        _check(entry.get("ProvisionedWriteCapacityAutoScalingUpdate"), "GlobalSecondaryIndexUpdates")
    for update in replica_updates:
        if replicas.member(str(update.get("RegionName"))) is None:
            raise _not_members(str(update.get("RegionName")))
        _check(update.get("ReplicaProvisionedReadCapacityAutoScalingUpdate"), "ReplicaUpdates")
        for entry in update.get("ReplicaGlobalSecondaryIndexUpdates") or ():
            if not isinstance(entry, dict):
                continue
            if entry.get("IndexName") not in index_names:
                raise ResourceNotFoundException(f"Requested resource not found: Index: {entry.get('IndexName')} not found")
            _check(entry.get("ProvisionedReadCapacityAutoScalingUpdate"), "ReplicaGlobalSecondaryIndexUpdates")
    if schema.billing_mode == PAY_PER_REQUEST and (write or index_writes or replica_updates):
        raise invalid_parameter(
            "Auto scaling settings cannot be specified for a table whose BillingMode is PAY_PER_REQUEST"
        )
    with replica_set_lock(database):
        for replica in replicas.replicas:
            member_database = database if replica.region == database.region else region_database(
                database, replica.region)
            member_database.refresh_catalogue(check=True)
            member = member_database.tables.get(schema.name)
            if member is None:
                continue
            own = next((update for update in replica_updates if update.get("RegionName") == replica.region), {})
            settings = _member_settings(member_database, member, write, index_writes, own)
            if settings != stored(member):
                member_database.update_table(replace(member, extensions={
                    **member.extensions, AUTO_SCALING_EXTENSION: settings}))
    described = describe_table_replica_auto_scaling(database, {"TableName": name})
    return {"TableAutoScalingDescription": described["TableAutoScalingDescription"]}


def _member_settings(database: Database, member: TableSchema, write: Any, index_writes: list[dict[str, Any]],
                     own: dict[str, Any]) -> dict[str, Any]:
    settings = stored(member)
    if isinstance(write, dict):
        settings["write"] = merged(database, member, settings.get("write"), write, "Write")
    read = own.get("ReplicaProvisionedReadCapacityAutoScalingUpdate")
    if isinstance(read, dict):
        settings["read"] = merged(database, member, settings.get("read"), read, "Read")
    indexes: dict[str, Any] = {key: dict(value) for key, value in (settings.get("indexes") or {}).items()}
    for entry in index_writes:
        update = entry.get("ProvisionedWriteCapacityAutoScalingUpdate")
        if isinstance(update, dict):
            index = indexes.setdefault(str(entry["IndexName"]), {})
            index["write"] = merged(database, member, index.get("write"), update, "Write")
    for entry in own.get("ReplicaGlobalSecondaryIndexUpdates") or ():
        update = entry.get("ProvisionedReadCapacityAutoScalingUpdate") if isinstance(entry, dict) else None
        if isinstance(update, dict):
            index = indexes.setdefault(str(entry["IndexName"]), {})
            index["read"] = merged(database, member, index.get("read"), update, "Read")
    if indexes:
        settings["indexes"] = indexes
    return settings


def describe_settings(member: TableSchema | None, entry: dict[str, Any]) -> None:
    """Add a member's stored settings to its ReplicaAutoScalingDescription ``entry``."""
    if member is None:
        return
    settings = stored(member)
    if settings.get("read"):
        entry["ReplicaProvisionedReadCapacityAutoScalingSettings"] = settings["read"]
    if settings.get("write"):
        entry["ReplicaProvisionedWriteCapacityAutoScalingSettings"] = settings["write"]
    indexes = settings.get("indexes") or {}
    for index_entry in entry.get("GlobalSecondaryIndexes") or ():
        index = indexes.get(index_entry["IndexName"]) or {}
        if index.get("read"):
            index_entry["ProvisionedReadCapacityAutoScalingSettings"] = index["read"]
        if index.get("write"):
            index_entry["ProvisionedWriteCapacityAutoScalingSettings"] = index["write"]


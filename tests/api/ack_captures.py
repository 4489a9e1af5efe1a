"""Control-plane error texts captured on the live service, as request shapes
to replay against any endpoint.

Source: the ack-api-quirks lab's DynamoDB findings (model 2012-08-10,
verified 2026-10-09 in us-west-2 and us-east-1): DDB-TABLE-457, the
"degenerate input" catalogue (one request per label against an idle
PAY_PER_REQUEST table, a table with one GSI, one backup), and the live rows
and SPEC texts of DDB-TABLE-442, the ValidationException catalogue. The
lab records the label and the answer, not the request: each request here is
rebuilt from its label (``shape`` says how sure that is). Where the lab cut
a long text, ``prefix`` is set and only that much is compared.

Placeholders, filled by ``fill``: ``{T}`` a PAY_PER_REQUEST table (key
``pk`` S, TTL on attribute ``ttl``), ``{G}`` a PAY_PER_REQUEST table with
GSI ``gsi1`` (key ``gk`` S), ``{P}`` a table with deletion protection on,
``{S}`` a table with a NEW_IMAGE stream, ``{ARN}`` {T}'s ARN, ``{BACKUP}``
a backup of {T}, ``{NEW}`` a name no table has, ``{MISSING}`` another.

Used by tests/api/test_ack_captures.py (every transport) and
tools/compare_captures.py (a report against any endpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AT_LEAST_ONE = (
    "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
    "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
    "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
)
INVALID = "One or more parameter values were invalid: "


@dataclass(frozen=True)
class Capture:
    label: str
    """The lab's label (DDB-TABLE-457) or a description (DDB-TABLE-442)."""
    operation: str
    request: dict[str, Any]
    code: str | None
    """The error code, or None: the service accepted the request."""
    message: str = ""
    prefix: bool = False
    """The lab cut the text: compare only its start."""
    shape: str = "from the label"
    before: tuple[tuple[str, dict[str, Any]], ...] = ()
    """Requests sent first, their answers ignored (the live sequence)."""
    """How the request was rebuilt: "from the label", "live row" (442's
    probe named the request), "guessed" (a SPEC text whose trigger is
    inferred from the text)."""


KEY = {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
       "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}


def create(**extra: Any) -> dict[str, Any]:
    """A valid PAY_PER_REQUEST CreateTable of {NEW}, with ``extra`` over it."""
    return {"TableName": "{NEW}", **KEY, "BillingMode": "PAY_PER_REQUEST", **extra}


def gsi(**extra: Any) -> dict[str, Any]:
    return {"IndexName": "gsi1", "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}, **extra}


GK = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "gk", "AttributeType": "S"}]


def restore(**extra: Any) -> dict[str, Any]:
    return {"TargetTableName": "{NEW}", "BackupArn": "{BACKUP}", **extra}


def gsi_update(action: str, **fields: Any) -> dict[str, Any]:
    return {"TableName": "{G}", "GlobalSecondaryIndexUpdates": [{action: fields}]}


LENGTH_3 = "failed to satisfy constraint: Member must have length greater than or equal to 3"
NAME_PATTERN = "failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
NOT_NULL = "failed to satisfy constraint: Member must not be null"
KMS_KEY = {"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": ""}
WARM_DECREASE = (INVALID + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than current "
                 "WarmThroughput, decreasing WarmThroughput is not supported")
GSI_PPR_UPDATES = (INVALID + "The only Updates for index: gsi1 when TableThroughputMode is PAY_PER_REQUEST "
                   "can be to OnDemandThroughput, WarmThroughput")


def warm_empty(index: str) -> str:
    return (INVALID + "WarmThroughput must have at least one of ReadUnitsPerSecond or WriteUnitsPerSecond "
            f"specified for index: {index}")


DEGENERATE: list[Capture] = [
    Capture("create_backup_empty_name", "CreateBackup", {"TableName": "{T}", "BackupName": ""}, "ValidationException",
            f"2 validation errors detected: Value '' at 'backupName' {NAME_PATTERN}; Value '' at 'backupName' {LENGTH_3}"),
    Capture("ct_attrdefs_empty_entry", "CreateTable", create(AttributeDefinitions=[{}]), "ValidationException",
            f"2 validation errors detected: Value null at 'attributeDefinitions.1.member.attributeType' {NOT_NULL}; "
            f"Value null at 'attributeDefinitions.1.member.attributeName' {NOT_NULL}"),
    Capture("ct_billing_empty", "CreateTable", create(BillingMode=""), "ValidationException",
            "1 validation error detected: Value '' at 'billingMode' failed to satisfy constraint: "
            "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"),
    Capture("ct_gsi_name_empty", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi(IndexName="")]), "ValidationException",
            f"2 validation errors detected: Value '' at 'globalSecondaryIndexes.1.member.indexName' {LENGTH_3}; "
            "Value '' at 'globalSecondaryIndexes.1.member.indexName' failed to satisfy constraint: Member",
            prefix=True),
    Capture("ct_gsi_projection_empty", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi(Projection={})]), "ValidationException",
            INVALID + "Unknown ProjectionType: null"),
    Capture("ct_keyschema_empty", "CreateTable", create(KeySchema=[]), "ValidationException",
            "1 validation error detected: Value '[]' at 'keySchema' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1"),
    Capture("ct_keyschema_empty_entry", "CreateTable", create(KeySchema=[{}]), "ValidationException",
            f"2 validation errors detected: Value null at 'keySchema.1.member.attributeName' {NOT_NULL}; "
            f"Value null at 'keySchema.1.member.keyType' {NOT_NULL}"),
    Capture("ct_sse_kms_key_empty", "CreateTable", create(SSESpecification=KMS_KEY), "ValidationException",
            "1 validation error detected: Value '' at 'sSESpecification.kMSMasterKeyId' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1"),
    Capture("ct_stream_viewtype_empty", "CreateTable",
            create(StreamSpecification={"StreamEnabled": True, "StreamViewType": ""}), "ValidationException",
            "1 validation error detected: Value '' at 'streamSpecification.streamViewType' failed to satisfy "
            "constraint: Member must satisfy enum value set: [OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES, NEW_IMAGE]"),
    Capture("ct_tags_empty_entry", "CreateTable", create(Tags=[{}]), "ValidationException",
            "The Tag Key provided is invalid, Key: null"),
    Capture("ct_warm_neg_neg", "CreateTable",
            create(WarmThroughput={"ReadUnitsPerSecond": -1, "WriteUnitsPerSecond": -1}), "ValidationException",
            INVALID + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than initial throughput "
            "for OnDemand. See: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
            "on-demand-capacity-mode.html#on-demand-cap", prefix=True),
    Capture("ct_gsi_odt_empty", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi(OnDemandThroughput={})]), None),
    Capture("ct_gsi_warm_empty", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi(WarmThroughput={})]), None),
    Capture("describe_backup_empty_arn", "DescribeBackup", {"BackupArn": ""}, "ValidationException",
            "Invalid Backup ARN"),
    Capture("describe_table_empty_name", "DescribeTable", {"TableName": ""}, "ValidationException",
            f"2 validation errors detected: Value '' at 'tableName' {LENGTH_3}; Value '' at 'tableName' {NAME_PATTERN}"),
    Capture("export_arn_empty", "ExportTableToPointInTime", {"TableArn": "", "S3Bucket": "bucket"},
            "ValidationException", "Invalid TableArn: Invalid Table ARN"),
    Capture("export_bucket_empty", "ExportTableToPointInTime", {"TableArn": "{ARN}", "S3Bucket": ""},
            "ValidationException",
            "1 validation error detected: Value '' at 's3Bucket' failed to satisfy constraint: Member must satisfy "
            "regular expression pattern: ^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$"),
    Capture("export_incremental_empty_spec", "ExportTableToPointInTime",
            {"TableArn": "{ARN}", "S3Bucket": "bucket", "ExportType": "INCREMENTAL_EXPORT",
             "IncrementalExportSpecification": {}}, "ValidationException",
            "Invalid Request: ExportFromTime must be provided in IncrementalExportSpecification"),
    Capture("gsi_create_warm_empty_name_empty", "UpdateTable",
            {"TableName": "{G}", "AttributeDefinitions": GK,
             "GlobalSecondaryIndexUpdates": [{"Create": gsi(IndexName="", WarmThroughput={})}]},
            "ValidationException",
            f"2 validation errors detected: Value '' at 'globalSecondaryIndexUpdates.1.member.create.indexName' "
            f"{LENGTH_3}; Value '' at 'globalSecondaryIndexUpdates.1.member.create.indexName' failed to sa",
            prefix=True),
    Capture("gsi_update_name_only_real", "UpdateTable", gsi_update("Update", IndexName="gsi1"),
            "ValidationException", GSI_PPR_UPDATES),
    Capture("gsi_update_odt_empty_ghost", "UpdateTable",
            gsi_update("Update", IndexName="ghost", OnDemandThroughput={}), "ResourceNotFoundException",
            "Requested resource not found: Index ghost for table {G}"),
    Capture("gsi_update_odt_empty_real", "UpdateTable",
            gsi_update("Update", IndexName="gsi1", OnDemandThroughput={}), "ValidationException", GSI_PPR_UPDATES),
    Capture("gsi_update_pt_empty_real", "UpdateTable",
            gsi_update("Update", IndexName="gsi1", ProvisionedThroughput={}), "ValidationException",
            "2 validation errors detected: Value null at "
            f"'globalSecondaryIndexUpdates.1.member.update.provisionedThroughput.writeCapacityUnits' {NOT_NULL}; "
            "Value null at 'globalSecondaryIndexUpdates.1.member.update.provisionedThro", prefix=True),
    Capture("gsi_update_warm_empty_ghost", "UpdateTable",
            gsi_update("Update", IndexName="ghost", WarmThroughput={}), "ValidationException", warm_empty("ghost")),
    Capture("gsi_update_warm_empty_ghost_missing_table", "UpdateTable",
            {**gsi_update("Update", IndexName="ghost", WarmThroughput={}), "TableName": "{MISSING}"},
            "ValidationException", warm_empty("ghost")),
    Capture("gsi_update_warm_empty_real", "UpdateTable",
            gsi_update("Update", IndexName="gsi1", WarmThroughput={}), "ValidationException", warm_empty("gsi1")),
    Capture("gsi_update_warm_neg_real", "UpdateTable",
            gsi_update("Update", IndexName="gsi1", WarmThroughput={"ReadUnitsPerSecond": -1}),
            "ValidationException",
            INVALID + "Requested ReadUnitsPerSecond for WarmThroughput for index gsi1 is lower than current "
            "WarmThroughput, decreasing WarmThroughput is not supported"),
    Capture("gsi_update_odt_neg_real", "UpdateTable",
            gsi_update("Update", IndexName="gsi1",
                       OnDemandThroughput={"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}), None),
    Capture("insights_action_empty", "UpdateContributorInsights",
            {"TableName": "{T}", "ContributorInsightsAction": ""}, "ValidationException",
            "1 validation error detected: Value '' at 'contributorInsightsAction' failed to satisfy constraint: "
            "Member must satisfy enum value set: [ENABLE, DISABLE]"),
    Capture("insights_describe_index_empty", "DescribeContributorInsights", {"TableName": "{T}", "IndexName": ""},
            "ValidationException", "IndexName must be at least 3 characters long and at most 255 characters long"),
    Capture("insights_index_empty", "UpdateContributorInsights",
            {"TableName": "{T}", "IndexName": "", "ContributorInsightsAction": "ENABLE"}, "ValidationException",
            "IndexName must be at least 3 characters long and at most 255 characters long"),
    Capture("insights_mode_empty", "UpdateContributorInsights",
            {"TableName": "{T}", "ContributorInsightsAction": "ENABLE", "ContributorInsightsMode": ""},
            "ValidationException",
            "1 validation error detected: Value '' at 'contributorInsightsMode' failed to satisfy constraint: "
            "Member must satisfy enum value set: [THROTTLED_KEYS, ACCESSED_AND_THROTTLED_KEYS]"),
    Capture("list_backups_limit0", "ListBackups", {"Limit": 0}, "ValidationException",
            "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1"),
    Capture("list_tables_limit0", "ListTables", {"Limit": 0}, "ValidationException",
            "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
            "Member must have value greater than or equal to 1"),
    Capture("list_tables_start_empty", "ListTables", {"ExclusiveStartTableName": ""}, "ValidationException",
            f"2 validation errors detected: Value '' at 'exclusiveStartTableName' {NAME_PATTERN}; "
            "Value '' at 'exclusiveStartTableName' failed to satisfy constraint: Member must have length great",
            prefix=True),
    Capture("rst_billing_empty", "RestoreTableFromBackup", restore(BillingModeOverride=""), "ValidationException",
            "1 validation error detected: Value '' at 'billingModeOverride' failed to satisfy constraint: "
            "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"),
    Capture("rst_gsi_override_empty_entry", "RestoreTableFromBackup", restore(GlobalSecondaryIndexOverride=[{}]),
            "ValidationException",
            f"3 validation errors detected: Value null at 'globalSecondaryIndexOverride.1.member.indexName' "
            f"{NOT_NULL}; Value null at 'globalSecondaryIndexOverride.1.member.keySchema' failed to satisfy "
            "constraint: Member must not b", prefix=True),
    Capture("rst_gsi_override_name_only", "RestoreTableFromBackup",
            restore(GlobalSecondaryIndexOverride=[{"IndexName": "x"}]), "ValidationException",
            f"3 validation errors detected: Value 'x' at 'globalSecondaryIndexOverride.1.member.indexName' "
            f"{LENGTH_3}; Value null at 'globalSecondaryIndexOverride.1.member.keySchema' failed to satisfy con",
            prefix=True),
    Capture("rst_lsi_override_empty_entry", "RestoreTableFromBackup", restore(LocalSecondaryIndexOverride=[{}]),
            "ValidationException",
            f"3 validation errors detected: Value null at 'localSecondaryIndexOverride.1.member.indexName' "
            f"{NOT_NULL}; Value null at 'localSecondaryIndexOverride.1.member.keySchema' failed to satisfy "
            "constraint: Member must not be ", prefix=True),
    Capture("rst_odt_override_zero", "RestoreTableFromBackup",
            restore(OnDemandThroughputOverride={"MaxReadRequestUnits": 0, "MaxWriteRequestUnits": 0}),
            "ValidationException",
            "Invalid Request: Requested MaxReadRequestUnits for OnDemandThroughput is outside of valid range"),
    Capture("rst_pt_override_empty", "RestoreTableFromBackup", restore(ProvisionedThroughputOverride={}),
            "ValidationException",
            f"2 validation errors detected: Value null at 'provisionedThroughputOverride.writeCapacityUnits' "
            f"{NOT_NULL}; Value null at 'provisionedThroughputOverride.readCapacityUnits' failed to satisfy "
            "constraint: Member must not", prefix=True),
    Capture("rst_pt_override_pay_per_request_empty", "RestoreTableFromBackup",
            restore(BillingModeOverride="PAY_PER_REQUEST", ProvisionedThroughputOverride={}), "ValidationException",
            f"2 validation errors detected: Value null at 'provisionedThroughputOverride.writeCapacityUnits' "
            f"{NOT_NULL}; Value null at 'provisionedThroughputOverride.readCapacityUnits' failed to satisfy "
            "constraint: Member must not", prefix=True),
    Capture("rst_sse_override_kms_empty_key", "RestoreTableFromBackup", restore(SSESpecificationOverride=KMS_KEY),
            "ValidationException",
            "1 validation error detected: Value '' at 'sSESpecificationOverride.kMSMasterKeyId' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1"),
    Capture("rst_target_empty", "RestoreTableFromBackup", restore(TargetTableName=""), "ValidationException",
            "TableName must be at least 3 characters long and at most 255 characters long"),
    Capture("tag_empty_entry", "TagResource", {"ResourceArn": "{ARN}", "Tags": [{}]}, "ValidationException",
            "The Tag Key provided is invalid, Key: null"),
    Capture("tag_key_only", "TagResource", {"ResourceArn": "{ARN}", "Tags": [{"Key": "k"}]}, "ValidationException",
            "The Tag Value provided is invalid, Value: null"),
    Capture("tag_value_only", "TagResource", {"ResourceArn": "{ARN}", "Tags": [{"Value": "v"}]},
            "ValidationException", "The Tag Key provided is invalid, Key: null"),
    Capture("ttl_attr_empty_string", "UpdateTimeToLive",
            {"TableName": "{T}", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": ""}},
            "ValidationException",
            "1 validation error detected: Value '' at 'timeToLiveSpecification.attributeName' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1"),
    Capture("ttl_attr_only", "UpdateTimeToLive",
            {"TableName": "{T}", "TimeToLiveSpecification": {"AttributeName": "ttl"}}, "ValidationException",
            f"1 validation error detected: Value null at 'timeToLiveSpecification.enabled' {NOT_NULL}"),
    Capture("ttl_empty_struct", "UpdateTimeToLive", {"TableName": "{T}", "TimeToLiveSpecification": {}},
            "ValidationException",
            f"2 validation errors detected: Value null at 'timeToLiveSpecification.attributeName' {NOT_NULL}; "
            f"Value null at 'timeToLiveSpecification.enabled' {NOT_NULL}"),
    Capture("ttl_enabled_only", "UpdateTimeToLive",
            {"TableName": "{T}", "TimeToLiveSpecification": {"Enabled": True}}, "ValidationException",
            f"1 validation error detected: Value null at 'timeToLiveSpecification.attributeName' {NOT_NULL}"),
    Capture("ucb_disable_days0", "UpdateContinuousBackups",
            {"TableName": "{T}", "PointInTimeRecoverySpecification":
             {"PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 0}}, "ValidationException",
            "1 validation error detected: Value '0' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' "
            "failed to satisfy constraint: Member must have value greater than or equal to 1"),
    Capture("ucb_empty_struct", "UpdateContinuousBackups",
            {"TableName": "{T}", "PointInTimeRecoverySpecification": {}}, "ValidationException",
            "1 validation error detected: Value null at "
            f"'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled' {NOT_NULL}"),
    Capture("ucb_enable_days0", "UpdateContinuousBackups",
            {"TableName": "{T}", "PointInTimeRecoverySpecification":
             {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 0}}, "ValidationException",
            "1 validation error detected: Value '0' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' "
            "failed to satisfy constraint: Member must have value greater than or equal to 1"),
    Capture("ucb_enable_days_neg", "UpdateContinuousBackups",
            {"TableName": "{T}", "PointInTimeRecoverySpecification":
             {"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": -1}}, "ValidationException",
            "1 validation error detected: Value '-1' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' "
            "failed to satisfy constraint: Member must have value greater than or equal to 1"),
    Capture("untag_empty_key", "UntagResource", {"ResourceArn": "{ARN}", "TagKeys": [""]}, "ValidationException",
            "The Tag Key provided is invalid, Key: "),
    Capture("untag_empty_list", "UntagResource", {"ResourceArn": "{ARN}", "TagKeys": []}, "ValidationException",
            "Atleast one Tag Key needs to be provided as Input."),
    Capture("ut_attrdefs_empty_entry_plus_dp", "UpdateTable",
            {"TableName": "{T}", "AttributeDefinitions": [{}], "DeletionProtectionEnabled": False},
            "ValidationException",
            f"2 validation errors detected: Value null at 'attributeDefinitions.1.member.attributeType' {NOT_NULL}; "
            f"Value null at 'attributeDefinitions.1.member.attributeName' {NOT_NULL}"),
    Capture("ut_attrdefs_type_empty_plus_dp", "UpdateTable",
            {"TableName": "{T}", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": ""}],
             "DeletionProtectionEnabled": False}, "ValidationException",
            "1 validation error detected: Value '' at 'attributeDefinitions.1.member.attributeType' failed to "
            "satisfy constraint: Member must satisfy enum value set: [B, N, S]"),
    Capture("ut_odt_zero_zero", "UpdateTable",
            {"TableName": "{T}", "OnDemandThroughput": {"MaxReadRequestUnits": 0, "MaxWriteRequestUnits": 0}},
            "ValidationException",
            INVALID + "Requested MaxReadRequestUnits for OnDemandThroughput for table is outside of valid range"),
    Capture("ut_sse_kms_key_empty", "UpdateTable", {"TableName": "{T}", "SSESpecification": KMS_KEY},
            "ValidationException",
            "1 validation error detected: Value '' at 'sSESpecification.kMSMasterKeyId' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1"),
    Capture("ut_stream_viewtype_empty", "UpdateTable",
            {"TableName": "{T}", "StreamSpecification": {"StreamEnabled": True, "StreamViewType": ""}},
            "ValidationException",
            "1 validation error detected: Value '' at 'streamSpecification.streamViewType' failed to satisfy "
            "constraint: Member must satisfy enum value set: [OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES, NEW_IMAGE]"),
    Capture("ut_tableclass_plus_warm_empty_gsi", "UpdateTable",
            {**gsi_update("Update", IndexName="gsi1", WarmThroughput={}), "TableClass": "STANDARD"},
            "ValidationException", warm_empty("gsi1")),
    Capture("ut_warm_neg_neg", "UpdateTable",
            {"TableName": "{T}", "WarmThroughput": {"ReadUnitsPerSecond": -1, "WriteUnitsPerSecond": -1}},
            "ValidationException", WARM_DECREASE),
    Capture("ut_warm_read_neg_only", "UpdateTable",
            {"TableName": "{T}", "WarmThroughput": {"ReadUnitsPerSecond": -1}}, "ValidationException", WARM_DECREASE),
    Capture("ut_warm_zero_zero", "UpdateTable",
            {"TableName": "{T}", "WarmThroughput": {"ReadUnitsPerSecond": 0, "WriteUnitsPerSecond": 0}},
            "ValidationException", WARM_DECREASE),
    Capture("ut_witness_empty_entry", "UpdateTable", {"TableName": "{T}", "GlobalTableWitnessUpdates": [{}]},
            "ValidationException", AT_LEAST_ONE[:200], prefix=True),
    Capture("ut_replica_update_empty_struct", "UpdateTable",
            {"TableName": "{T}", "ReplicaUpdates": [{"Update": {}}]}, "ValidationException",
            f"1 validation error detected: Value null at 'replicaUpdates.1.member.update.regionName' {NOT_NULL}"),
    Capture("ut_replica_create_empty_struct", "UpdateTable",
            {"TableName": "{T}", "ReplicaUpdates": [{"Create": {}}]}, "ValidationException",
            "One or more parameter values were invalid"),
    Capture("ut_odt_empty_plus_billing", "UpdateTable",
            {"TableName": "{T}", "BillingMode": "PAY_PER_REQUEST", "OnDemandThroughput": {}}, None),
    Capture("ut_warm_empty_plus_tableclass", "UpdateTable",
            {"TableName": "{T}", "TableClass": "STANDARD", "WarmThroughput": {}}, None),
]

LIVE: list[Capture] = [
    Capture("val_update_only_name", "UpdateTable", {"TableName": "{T}"}, "ValidationException", AT_LEAST_ONE,
            shape="live row"),
    Capture("val_update_attrdefs_only", "UpdateTable", {"TableName": "{T}", "AttributeDefinitions": KEY[
        "AttributeDefinitions"]}, "ValidationException", AT_LEAST_ONE, shape="live row"),
    Capture("val_sse_plus_dp", "UpdateTable",
            {"TableName": "{T}", "SSESpecification": {"Enabled": True}, "DeletionProtectionEnabled": True},
            "ValidationException",
            INVALID + "Server-Side Encryption modification must be the only operation in the request",
            shape="live row"),
    Capture("val_pt_on_ppr", "UpdateTable",
            {"TableName": "{T}", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}},
            "ValidationException",
            INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
            "PAY_PER_REQUEST", shape="live row"),
    Capture("val_delete_dp_on", "DeleteTable", {"TableName": "{P}"}, "ValidationException",
            "Resource cannot be deleted as it is currently protected against deletion. "
            "Disable deletion protection first.", shape="live row"),
    Capture("val_ttl_already_enabled_other_attr", "UpdateTimeToLive",
            {"TableName": "{T}", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "other"}},
            "ValidationException", "TimeToLive is active on a different AttributeName: current AttributeName is ttl",
            shape="live row"),
    Capture("val_stream_disable_none", "UpdateTable",
            {"TableName": "{T}", "StreamSpecification": {"StreamEnabled": False}}, "ValidationException",
            "Table has no stream to disable: TableName: {T}", shape="live row"),
    Capture("ise_warm_empty_plus_pt", "UpdateTable",
            {"TableName": "{T}", "WarmThroughput": {},
             "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}, "ValidationException",
            INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
            "PAY_PER_REQUEST", shape="live row"),
    # DDB-TABLE-446 and 447: the ResourceNotFoundException and TableNotFoundException live rows.
    Capture("rnf_describe", "DescribeTable", {"TableName": "{MISSING}"}, "ResourceNotFoundException",
            "Requested resource not found: Table: {MISSING} not found", shape="live row"),
    Capture("rnf_tags_arn", "ListTagsOfResource", {"ResourceArn": "{MISSING_ARN}"}, "ResourceNotFoundException",
            "Requested resource not found: ResourceArn: {MISSING_ARN} not found", shape="live row"),
    Capture("rnf_ttl_missing", "UpdateTimeToLive",
            {"TableName": "{MISSING}", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"}},
            "ResourceNotFoundException", "Requested resource not found: Table: {MISSING} not found",
            shape="live row"),
    Capture("rnf_insights_ghost", "DescribeContributorInsights", {"TableName": "{T}", "IndexName": "ghost"},
            "ResourceNotFoundException", "Requested resource not found: Index: ghost not found for table: {T}",
            shape="live row"),
    Capture("rnf_gsi_ghost_delete", "UpdateTable", gsi_update("Delete", IndexName="ghost"),
            "ResourceNotFoundException", "Requested resource not found: Index ghost for table {G}",
            shape="guessed"),
    Capture("ise_warm_empty_missing_table", "UpdateTable", {"TableName": "{MISSING}", "WarmThroughput": {}},
            "ResourceNotFoundException", "Requested resource not found: Table: {MISSING} not found",
            shape="live row"),
    Capture("tnf_describe_cb", "DescribeContinuousBackups", {"TableName": "{MISSING}"}, "TableNotFoundException",
            "Table not found: {MISSING}", shape="live row"),
    Capture("tnf_create_backup", "CreateBackup", {"TableName": "{MISSING}", "BackupName": "backup"},
            "TableNotFoundException", "Table not found: {MISSING}", shape="live row"),
    Capture("tnf_export_arn", "ExportTableToPointInTime", {"TableArn": "{MISSING_ARN}", "S3Bucket": "bucket"},
            "TableNotFoundException", "Table not found: {MISSING_ARN}", shape="live row"),
    # DDB-TABLE-443: LimitExceededException live rows and quota texts.
    Capture("tableclass_3", "UpdateTable", {"TableName": "{NEW}", "TableClass": "STANDARD_INFREQUENT_ACCESS"},
            "LimitExceededException", "Subscriber limit exceeded: Updates to TableClass are limited to 2 times in "
            "30 day(s).", shape="live row",
            before=(("CreateTable", create()),
                    ("UpdateTable", {"TableName": "{NEW}", "TableClass": "STANDARD_INFREQUENT_ACCESS"}),
                    ("UpdateTable", {"TableName": "{NEW}", "TableClass": "STANDARD"}))),
    Capture("read capacity above the table maximum", "CreateTable",
            create(BillingMode="PROVISIONED",
                   ProvisionedThroughput={"ReadCapacityUnits": 40001, "WriteCapacityUnits": 1}),
            "LimitExceededException",
            "The requested ReadCapacityUnits, 40001, is above the per table maximum for the account in {REGION}. "
            "Per table maximum: 40000. Refer to the Amazon DynamoDB Developer Guide for current limits and how to "
            "request higher limits.", shape="guessed"),
    Capture("tnf_restore_source_arn", "RestoreTableToPointInTime",
            {"SourceTableArn": "{MISSING_ARN}", "TargetTableName": "{NEW}", "UseLatestRestorableTime": True},
            "TableNotFoundException", "Table not found", shape="live row"),
    Capture("tnf_restore_source_name", "RestoreTableToPointInTime",
            {"SourceTableName": "{MISSING}", "TargetTableName": "{NEW}", "UseLatestRestorableTime": True},
            "TableNotFoundException", "Table not found: {MISSING}", shape="live row"),
    Capture("ise_warm_empty_bad_name", "UpdateTable", {"TableName": "ab", "WarmThroughput": {}},
            "ValidationException",
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: "
            "Member must have length greater than or equal to 3", shape="live row"),
]

SPEC: list[Capture] = [
    Capture("stream already enabled", "UpdateTable",
            {"TableName": "{S}", "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}},
            "ValidationException", "Table already has an enabled stream: TableName: {S}", shape="guessed"),
    Capture("TTL already enabled", "UpdateTimeToLive",
            {"TableName": "{T}", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"}},
            "ValidationException", "TimeToLive is already enabled", shape="guessed"),
    Capture("first key not HASH", "CreateTable",
            create(KeySchema=[{"AttributeName": "pk", "KeyType": "RANGE"}]), "ValidationException",
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type", shape="guessed"),
    Capture("second key not RANGE", "CreateTable",
            create(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "HASH"}],
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "sk", "AttributeType": "S"}]),
            "ValidationException", "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
            shape="guessed"),
    Capture("hash and range of one name", "CreateTable",
            create(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}],
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "sk", "AttributeType": "S"}]),
            "ValidationException", "Both the Hash Key and the Range Key element in the KeySchema have the same name",
            shape="guessed"),
    Capture("key not defined", "CreateTable",
            create(KeySchema=[{"AttributeName": "x", "KeyType": "HASH"}]), "ValidationException",
            INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [x], "
            "AttributeDefinitions: [pk]", shape="guessed"),
    Capture("definition not used masks an index error", "CreateTable",
            create(AttributeDefinitions=[*GK, {"AttributeName": "x", "AttributeType": "S"}],
                   GlobalSecondaryIndexes=[gsi(Projection={"ProjectionType": "INCLUDE"})]), "ValidationException",
            INVALID + "Some AttributeDefinitions are not used. AttributeDefinitions: [", prefix=True,
            shape="guessed"),
    Capture("index create with table throughput", "UpdateTable",
            {"TableName": "{G}", "AttributeDefinitions": [{"AttributeName": "g2", "AttributeType": "S"}],
             "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
             "GlobalSecondaryIndexUpdates": [{"Create": gsi(IndexName="gsi2", KeySchema=[
                 {"AttributeName": "g2", "KeyType": "HASH"}])}]}, "ValidationException",
            INVALID + "You cannot create or delete index while updating table IOPS", shape="guessed"),
    Capture("index create with a stream change", "UpdateTable",
            {"TableName": "{G}", "AttributeDefinitions": [{"AttributeName": "g2", "AttributeType": "S"}],
             "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
             "GlobalSecondaryIndexUpdates": [{"Create": gsi(IndexName="gsi2", KeySchema=[
                 {"AttributeName": "g2", "KeyType": "HASH"}])}]}, "ValidationException",
            INVALID + "You cannot create or delete index while changing stream status", shape="guessed"),
    Capture("stream change with table throughput", "UpdateTable",
            {"TableName": "{T}", "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
             "BillingMode": "PROVISIONED",
             "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}, "ValidationException",
            INVALID + "You cannot modify stream status while updating table IOPS", shape="guessed"),
    Capture("index create with WarmThroughput", "UpdateTable",
            {"TableName": "{G}", "AttributeDefinitions": [{"AttributeName": "g2", "AttributeType": "S"}],
             "WarmThroughput": {"ReadUnitsPerSecond": 13000},
             "GlobalSecondaryIndexUpdates": [{"Create": gsi(IndexName="gsi2", KeySchema=[
                 {"AttributeName": "g2", "KeyType": "HASH"}])}]}, "ValidationException",
            INVALID + "Create global secondary index cannot be specified when updating WarmThroughput",
            shape="guessed"),
    Capture("OnDemandThroughput with another change", "UpdateTable",
            {"TableName": "{T}", "OnDemandThroughput": {"MaxReadRequestUnits": 100},
             "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}}, "ValidationException",
            INVALID + "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request",
            shape="guessed"),
    Capture("index list empty beside another change", "UpdateTable",
            {"TableName": "{G}", "BillingMode": "PAY_PER_REQUEST", "GlobalSecondaryIndexUpdates": []},
            "ValidationException", INVALID + "List of GlobalSecondaryIndexUpdates is empty", shape="guessed"),
    Capture("attribute name duplicated", "CreateTable",
            create(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "pk", "AttributeType": "N"}]),
            "ValidationException", "Attribute Name is duplicated: pk", shape="guessed"),
    Capture("GSI list empty", "CreateTable", create(GlobalSecondaryIndexes=[]), "ValidationException",
            INVALID + "List of GlobalSecondaryIndexes is empty", shape="guessed"),
    Capture("LSI list empty", "CreateTable", create(LocalSecondaryIndexes=[]), "ValidationException",
            INVALID + "List of LocalSecondaryIndexes is empty", shape="guessed"),
    Capture("duplicate index name", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi(), gsi()]), "ValidationException",
            INVALID + "Duplicate index name: gsi1", shape="guessed"),
    Capture("INCLUDE without NonKeyAttributes", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi(Projection={"ProjectionType": "INCLUDE"})]),
            "ValidationException", INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
            shape="guessed"),
    Capture("LSI without a table range key", "CreateTable",
            create(AttributeDefinitions=GK, LocalSecondaryIndexes=[{
                "IndexName": "lsi1", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                   {"AttributeName": "gk", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}]),
            "ValidationException",
            INVALID + "Table KeySchema does not have a range key, which is required when specifying a "
            "LocalSecondaryIndex", shape="guessed"),
    Capture("invalid table class", "CreateTable", create(TableClass="BOGUS"), "ValidationException",
            "Invalid table-class parameter provided. Please try again with a valid table-class value: "
            "[STANDARD, STANDARD_INFREQUENT_ACCESS].", shape="guessed"),
    Capture("PROVISIONED without throughput", "CreateTable", create(BillingMode="PROVISIONED"),
            "ValidationException",
            INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is "
            "PROVISIONED", shape="guessed"),
    Capture("PROVISIONED GSI without throughput", "CreateTable",
            create(BillingMode="PROVISIONED", AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi()],
                   ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}),
            "ValidationException", INVALID + "ProvisionedThroughput is not specified for index: gsi1",
            shape="guessed"),
    Capture("PAY_PER_REQUEST GSI with throughput", "CreateTable",
            create(AttributeDefinitions=GK, GlobalSecondaryIndexes=[
                gsi(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})]),
            "ValidationException",
            INVALID + "ProvisionedThroughput should not be specified for index: gsi1 when BillingMode is "
            "PAY_PER_REQUEST", shape="guessed"),
    Capture("PAY_PER_REQUEST with throughput", "CreateTable",
            create(ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}), "ValidationException",
            INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
            "PAY_PER_REQUEST", shape="guessed"),
    Capture("stream enabled without a view type", "CreateTable",
            create(StreamSpecification={"StreamEnabled": True}), "ValidationException",
            INVALID + "Table is being created with a stream enabled, UpdateViewType is required", shape="guessed"),
    Capture("SSEType with Enabled false", "CreateTable",
            create(SSESpecification={"Enabled": False, "SSEType": "KMS"}), "ValidationException",
            INVALID + "SSEType can not be specified if Enabled is false", shape="guessed"),
    Capture("ARN without arn:", "ListTagsOfResource", {"ResourceArn": "x"}, "ValidationException",
            INVALID + "ARNs must start with 'arn:': x", shape="guessed"),
    Capture("no tags", "TagResource", {"ResourceArn": "{ARN}", "Tags": []}, "ValidationException",
            "Atleast one Tag needs to be provided as Input.", shape="guessed"),
    Capture("aws: tag key", "TagResource", {"ResourceArn": "{ARN}", "Tags": [{"Key": "aws:x", "Value": "v"}]},
            "ValidationException", "Tag Key cannot be prefixed with aws:, Key: aws:x", shape="guessed"),
    Capture("RecoveryPeriodInDays when disabling", "UpdateContinuousBackups",
            {"TableName": "{T}", "PointInTimeRecoverySpecification":
             {"PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 10}}, "ValidationException",
            "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.",
            shape="guessed"),
    Capture("restore to a time without a time", "RestoreTableToPointInTime",
            {"SourceTableName": "{T}", "TargetTableName": "{NEW}"}, "ValidationException",
            "Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be specified, "
            "but not both", shape="guessed"),
    Capture("restore to a time without a source", "RestoreTableToPointInTime",
            {"TargetTableName": "{NEW}", "UseLatestRestorableTime": True}, "ValidationException",
            "Invalid Request: Must provide exactly one of: sourceTableArn, sourceTableName", shape="guessed"),
    Capture("restore to a time with two sources", "RestoreTableToPointInTime",
            {"SourceTableName": "{T}", "SourceTableArn": "{ARN}", "TargetTableName": "{NEW}",
             "UseLatestRestorableTime": True}, "ValidationException",
            "Invalid Request: Must provide exactly one of: sourceTableArn, sourceTableName", shape="guessed"),
    Capture("malformed backup ARN", "DescribeBackup", {"BackupArn": "arn:aws:dynamodb:us-east-1:1:table/x"},
            "ValidationException", "Invalid Backup ARN", shape="guessed"),
    Capture("backup time range reversed", "ListBackups",
            {"TimeRangeLowerBound": 2000000000, "TimeRangeUpperBound": 1000000000}, "ValidationException",
            INVALID + "Time range lower bound must be less than or equal to upper bound", shape="guessed"),
    Capture("stream enabling without a view type", "UpdateTable",
            {"TableName": "{T}", "StreamSpecification": {"StreamEnabled": True}}, "ValidationException",
            INVALID + "If stream is being enabled then UpdateViewType is required", shape="guessed"),
    Capture("stream disabling with a view type", "UpdateTable",
            {"TableName": "{S}", "StreamSpecification": {"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"}},
            "ValidationException", INVALID + "If stream is being disabled, then UpdateViewType must not be specified",
            shape="guessed"),
    Capture("PROVISIONED switch without throughput", "UpdateTable", {"TableName": "{T}", "BillingMode": "PROVISIONED"},
            "ValidationException", INVALID + "ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
            shape="guessed"),
]

CAPTURES: list[Capture] = DEGENERATE + LIVE + SPEC


def fill(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every ``{NAME}`` placeholder in its strings replaced."""
    if isinstance(value, str):
        for name, replacement in names.items():
            value = value.replace("{" + name + "}", replacement)
        return value
    if isinstance(value, dict):
        return {key: fill(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, names) for item in value]
    return value


def answer(client: Any, capture: Capture, names: dict[str, str]) -> tuple[str | None, str]:
    """(error code or None, message) of ``capture``'s request sent with
    ``client`` (botocore, parameter validation off)."""
    from botocore.exceptions import ClientError
    from botocore.exceptions import ClientError as Refused

    for operation, request in capture.before:
        try:
            getattr(client, _snake(operation))(**fill(request, names))
        except Refused:
            pass
    method = getattr(client, _snake(capture.operation))
    try:
        method(**fill(capture.request, names))
    except ClientError as error:
        return error.response["Error"]["Code"], error.response["Error"].get("Message", "")
    return None, ""


EXACT, SAME_ERRORS, DIFFERENT = "exact", "same errors", "different"


def compare(capture: Capture, got: tuple[str | None, str], names: dict[str, str]) -> str:
    """EXACT; SAME_ERRORS: the same constraint errors, listed in another
    order (DynamoDB's order among the errors of one request is not stable
    between captures: dynalite's recordings and the 2026 lab list some pairs
    the other way round); else DIFFERENT."""
    code, message = got
    if code != capture.code:
        return DIFFERENT
    if capture.code is None:
        return EXACT
    expected = fill(capture.message, names)
    if message.startswith(expected) if capture.prefix else message == expected:
        return EXACT
    expected_count, expected_errors = _errors(expected)
    count, errors = _errors(message)
    if expected_count is None or expected_count != count:
        return DIFFERENT
    if capture.prefix:
        expected_errors = expected_errors[:-1]  # the last one was cut
    missing = [error for error in expected_errors if error not in errors]
    return DIFFERENT if missing else SAME_ERRORS


def _errors(message: str) -> tuple[int | None, list[str]]:
    """(N, the errors) of an "N validation error(s) detected: ...; ..." text."""
    head, separator, rest = message.partition(" detected: ")
    count = head.split(" validation error")[0]
    if not separator or not count.isdigit():
        return None, []
    return int(count), rest.split("; ")


def _snake(operation: str) -> str:
    return "".join("_" + char.lower() if char.isupper() else char for char in operation).lstrip("_")


def prepare(client: Any, prefix: str) -> dict[str, str]:
    """Make the tables and the backup the captures name; returns the names
    for ``fill`` ({NEW} is set per request by ``replay``)."""
    names = {"T": f"{prefix}-t", "G": f"{prefix}-g", "P": f"{prefix}-p", "S": f"{prefix}-s",
             "MISSING": f"{prefix}-missing"}
    plain = {**KEY, "BillingMode": "PAY_PER_REQUEST"}
    client.create_table(TableName=names["T"], **plain)
    client.create_table(TableName=names["G"], BillingMode="PAY_PER_REQUEST", KeySchema=KEY["KeySchema"],
                        AttributeDefinitions=GK, GlobalSecondaryIndexes=[gsi()])
    client.create_table(TableName=names["P"], DeletionProtectionEnabled=True, **plain)
    client.create_table(TableName=names["S"], StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
                        **plain)
    waiter = client.get_waiter("table_exists")
    for name in ("T", "G", "P", "S"):
        waiter.wait(TableName=names[name], WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    client.update_time_to_live(TableName=names["T"], TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
    names["ARN"] = client.describe_table(TableName=names["T"])["Table"]["TableArn"]
    names["REGION"] = names["ARN"].split(":")[3]
    names["MISSING_ARN"] = names["ARN"].rsplit("/", 1)[0] + "/" + names["MISSING"]
    names["BACKUP"] = client.create_backup(TableName=names["T"], BackupName="captures")["BackupDetails"]["BackupArn"]
    return names


def replay(client: Any, capture: Capture, names: dict[str, str], new_name: str) -> tuple[str | None, str]:
    """``capture``'s answer; a table it made ({NEW}) is deleted again."""
    names = {**names, "NEW": new_name}
    try:
        return answer(client, capture, names)
    finally:
        if capture.code is None or capture.before or capture.operation in (
            "CreateTable", "RestoreTableFromBackup", "RestoreTableToPointInTime"
        ):
            _drop(client, new_name)


def tear_down(client: Any, names: dict[str, str]) -> None:
    from botocore.exceptions import ClientError

    try:
        client.update_table(TableName=names["P"], DeletionProtectionEnabled=False)
    except ClientError:
        pass
    for name in ("T", "G", "P", "S"):
        _drop(client, names[name])
    try:
        client.delete_backup(BackupArn=names["BACKUP"])
    except (ClientError, KeyError):
        pass


def _drop(client: Any, name: str) -> None:
    from botocore.exceptions import ClientError

    for _ in range(100):
        try:
            client.delete_table(TableName=name)
            return
        except ClientError as error:
            if error.response["Error"]["Code"] != "ResourceInUseException":
                return  # not there
        import time

        time.sleep(0.1)

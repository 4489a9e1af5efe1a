"""Regenerate dynastore/ops/service_model.json from botocore's DynamoDB model.

    python tools/generate_shapes.py            # writes the file
    python tools/generate_shapes.py --check    # exit 1 if the file is stale

The output keeps only what request validation needs (input shapes reachable
from the operations, their types and constraints) and applies the documented
SERVICE DIVERGENCES below: places where the running service answers
differently from what botocore's model says. Each divergence names its
evidence (dynalite's conformance tests, dynoxide, recorded live answers).
dynastore itself never imports botocore; only this tool does.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent.parent / "dynastore" / "ops" / "service_model.json"

# --- Service divergences ----------------------------------------------------------

#: Operations whose TableName accepts a name (min 1 when not an ARN, pattern only
#: on a non-empty name) - dynoxide's conformance-tested "ReadWrite" context.
DATA_PLANE_OPERATIONS = frozenset({
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
    "BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems",
})

#: Operations that check the table name by hand before the constraint
#: validator: "The parameter 'TableName' is required but was not present in the
#: request" / "TableName must be at least 3 characters long and at most 255
#: characters long" (dynalite validations with `required`/`tableName`; live
#: answers for RestoreTableFromBackup TargetTableName and the legacy global
#: table APIs).
#: Each entry: (member, name used in the length message or None for no
#: length check, whether a missing member gets "The parameter '<member>' is
#: required ..."). UpdateTable's short name gets the constraint text today
#: (live, ack-api-quirks DDB-TABLE-442: 'ab' -> "1 validation error detected:
#: Value 'ab' at 'tableName' ... length greater than or equal to 3").
TABLE_NAME_PRECHECKS: dict[str, list[tuple[str, str | None, bool]]] = {
    "CreateTable": [("TableName", "TableName", True)],
    "DeleteTable": [("TableName", "TableName", True)],
    "UpdateTable": [("TableName", None, True)],
    "DescribeTimeToLive": [("TableName", "TableName", True)],
    "UpdateTimeToLive": [("TableName", "TableName", True)],
    "DescribeGlobalTable": [("GlobalTableName", "TableName", True)],
    "DescribeGlobalTableSettings": [("GlobalTableName", "TableName", True)],
    "RestoreTableFromBackup": [("TargetTableName", "TableName", True)],
    # live: IndexName '' -> "IndexName must be at least 3 characters long ..."
    "DescribeContributorInsights": [("IndexName", "IndexName", False)],
    "UpdateContributorInsights": [("IndexName", "IndexName", False)],
}

#: Shapes whose model constraints the service does not report as constraint
#: errors: it answers with its own texts instead (live: DescribeBackup
#: BackupArn '' -> "Invalid Backup ARN"; ExportTableToPointInTime TableArn ''
#: -> "Invalid TableArn: Invalid Table ARN"; UntagResource TagKeys [''] ->
#: "The Tag Key provided is invalid, Key: "; CreateTable/UpdateTable TableClass
#: 'FOO' -> "Invalid table-class parameter provided. Please try again with a
#: valid table-class value: [STANDARD, STANDARD_INFREQUENT_ACCESS].", mined
#: from live answers by ack-api-quirks' DynamoDB message catalogue).
UNCONSTRAINED: frozenset[str] = frozenset({
    "BackupArn", "TableArn@arn", "TagKeyString", "TagValueString", "TableClass",
})

#: Constraints the service applies that the model lacks (live answers:
#: KMSMasterKeyId '' -> "Member must have length greater than or equal to 1").
EXTRA_CONSTRAINTS: dict[str, dict[str, Any]] = {
    "KMSMasterKeyId": {"min": 1},
}

#: Required members the service checks although the model does not say so
#: (dynalite createTable validations: notNull).
EXTRA_REQUIRED: dict[str, list[str]] = {
    "CreateTableInput": ["AttributeDefinitions", "KeySchema"],
}

#: Required members the service does not report as "Member must not be null"
#: (it answers with its own texts later: "Invalid TableArn", "The Tag Key
#: provided is invalid, Key: null", ...).
NOT_REQUIRED: dict[str, list[str]] = {
    "Tag": ["Key", "Value"],
    "TagResourceInput": ["ResourceArn"],
    "UntagResourceInput": ["ResourceArn"],
    "ListTagsOfResourceInput": ["ResourceArn"],
    # live (ack-api-quirks DDB-TABLE-457): ReplicaUpdates [{Create: {}}] is the
    # bare "One or more parameter values were invalid" (Update: {} is the
    # constraint text)
    "CreateReplicationGroupMemberAction": ["RegionName"],
}

#: Enum values in the order DynamoDB lists them in "Member must satisfy enum
#: value set: [...]" (dynalite tests and live answers). Others keep model order.
ENUM_ORDER: dict[str, list[str]] = {
    "ReturnValue": ["ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"],
    "ComparisonOperator": [
        "IN", "NULL", "BETWEEN", "LT", "NOT_CONTAINS", "EQ", "GT", "NOT_NULL", "NE",
        "LE", "BEGINS_WITH", "GE", "CONTAINS",
    ],
    "Select": ["SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"],
    "ConditionalOperator": ["OR", "AND"],
    "ProjectionType": ["ALL", "INCLUDE", "KEYS_ONLY"],
    "ScalarAttributeType": ["B", "N", "S"],
    "StreamViewType": ["OLD_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES", "NEW_IMAGE"],
    "ContributorInsightsMode": ["THROTTLED_KEYS", "ACCESSED_AND_THROTTLED_KEYS"],
}

#: The order in which DynamoDB reports constraint violations of a structure's
#: members (dynalite's validations, whose tests pinned the service's order).
#: Members not listed follow in model order.
VALIDATION_ORDER: dict[str, list[str]] = {
    "GetItemInput": ["ReturnConsumedCapacity", "AttributesToGet", "TableName", "Key"],
    "PutItemInput": [
        "ReturnConsumedCapacity", "TableName", "Item", "ConditionalOperator", "Expected",
        "ReturnValues", "ReturnItemCollectionMetrics",
    ],
    "DeleteItemInput": [
        "ReturnConsumedCapacity", "TableName", "ReturnValues", "ReturnItemCollectionMetrics",
        "Key", "ConditionalOperator", "Expected",
    ],
    "UpdateItemInput": [
        "ReturnConsumedCapacity", "TableName", "ReturnItemCollectionMetrics", "ReturnValues",
        "Key", "ConditionalOperator", "Expected", "AttributeUpdates",
    ],
    "QueryInput": [
        "Select", "IndexName", "ReturnConsumedCapacity", "QueryFilter", "TableName",
        "ConditionalOperator", "AttributesToGet", "Limit", "KeyConditions",
        "ExclusiveStartKey",
    ],
    "ScanInput": [
        "Limit", "TotalSegments", "ReturnConsumedCapacity", "AttributesToGet", "Select",
        "TableName", "ExclusiveStartKey", "Segment", "ScanFilter",
    ],
    "BatchGetItemInput": ["ReturnConsumedCapacity", "RequestItems"],
    "BatchWriteItemInput": ["ReturnConsumedCapacity", "ReturnItemCollectionMetrics", "RequestItems"],
    "TransactWriteItemsInput": [
        "ReturnConsumedCapacity", "ReturnItemCollectionMetrics", "ClientRequestToken",
        "TransactItems",
    ],
    "CreateTableInput": [
        "AttributeDefinitions", "TableName", "ProvisionedThroughput", "KeySchema",
        "LocalSecondaryIndexes", "GlobalSecondaryIndexes",
    ],
    "UpdateTableInput": ["TableName", "ProvisionedThroughput", "GlobalSecondaryIndexUpdates"],
    "ListTablesInput": ["Limit", "ExclusiveStartTableName"],
    "ProvisionedThroughput": ["WriteCapacityUnits", "ReadCapacityUnits"],
    "LocalSecondaryIndex": ["KeySchema", "Projection", "IndexName"],
    "GlobalSecondaryIndex": ["KeySchema", "Projection", "IndexName", "ProvisionedThroughput"],
    "Projection": ["ProjectionType", "NonKeyAttributes"],
    "GlobalSecondaryIndexUpdate": ["Update", "Create", "Delete"],
    "CreateGlobalSecondaryIndexAction": ["Projection", "IndexName", "ProvisionedThroughput", "KeySchema"],
    "ExpectedAttributeValue": ["AttributeValueList", "ComparisonOperator", "Exists", "Value"],
    "KeysAndAttributes": [
        "Keys", "AttributesToGet", "ConsistentRead", "ProjectionExpression",
        "ExpressionAttributeNames",
    ],
    # live 2026 (ack-api-quirks DDB-TABLE-457, CreateTable and UpdateTable):
    # attributeType first; dynalite's older recording had attributeName first
    "AttributeDefinition": ["AttributeType", "AttributeName"],
    "KeySchemaElement": ["AttributeName", "KeyType"],
    # live: an empty TimeToLiveSpecification lists attributeName, then enabled
    "TimeToLiveSpecification": ["AttributeName", "Enabled"],
}

#: Index overrides of the restore calls report their members in another
#: order than CreateTable's indexes (live 2026, ack-api-quirks DDB-TABLE-457:
#: RestoreTableFromBackup's GlobalSecondaryIndexOverride [{}] lists
#: indexName, then keySchema, ...): the restore inputs get copies of the list
#: and element shapes (named "<shape>@restore") with this order.
RESTORE_INPUTS = ("RestoreTableFromBackupInput", "RestoreTableToPointInTimeInput")
RESTORE_INDEX_ORDER: dict[str, list[str]] = {
    "GlobalSecondaryIndex": ["IndexName", "KeySchema", "Projection"],
    "LocalSecondaryIndex": ["IndexName", "KeySchema", "Projection"],
}
RESTORE_SUFFIX = "@restore"

#: Java patterns Python's re cannot read, translated.
PATTERN_TRANSLATIONS: dict[str, str] = {
    r"\p{Print}+": r"[\x20-\x7e]+",
    "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*":
        "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\U00010000-\\U0010FFFF\\r\\n\\t]*",
}

TABLE_ARN_SHAPE = "TableArn"
DATA_TABLE_NAME = "TableArn@data"
CONTROL_TABLE_NAME = "TableArn@control"
ARN_ONLY = "TableArn@arn"
"""TableArn shape of a member that takes only an ARN (its name says "Arn")."""


def load_botocore_model() -> tuple[dict[str, Any], str]:
    import botocore  # type: ignore[import-untyped]  # only the generator needs botocore

    directory = Path(botocore.__file__).parent / "data" / "dynamodb" / "2012-08-10"
    plain = directory / "service-2.json"
    if plain.exists():
        return json.loads(plain.read_text()), f"botocore {botocore.__version__}"
    with gzip.open(directory / "service-2.json.gz") as handle:
        return json.load(handle), f"botocore {botocore.__version__}"


def table_name_shape(context: str) -> dict[str, Any]:
    """TableArn members: a table name or a table ARN (see shapes.py)."""
    return {"type": "string", "min": 1, "max": 1024, "table_name": context}


def convert_shape(name: str, shape: dict[str, Any], table_context: str) -> dict[str, Any]:
    """The validation-relevant part of one botocore shape."""
    kind = shape["type"]
    out: dict[str, Any] = {"type": kind}
    shape = {**shape, **EXTRA_CONSTRAINTS.get(name, {})}
    if name in UNCONSTRAINED and kind not in ("list", "map", "structure"):
        return out
    for bound in ("min", "max"):
        if bound in shape:
            out[bound] = shape[bound]
    if kind == "string":
        if "pattern" in shape:
            out["pattern"] = shape["pattern"]  # Java syntax, as messages quote it
            if shape["pattern"] in PATTERN_TRANSLATIONS:
                out["regex"] = PATTERN_TRANSLATIONS[shape["pattern"]]
        if "enum" in shape:
            out["enum"] = ENUM_ORDER.get(name, shape["enum"])
    elif kind == "list":
        out["member"] = rename(shape["member"]["shape"], table_context)
    elif kind == "map":
        out["key"] = rename(shape["key"]["shape"], "control")
        out["value"] = rename(shape["value"]["shape"], table_context)
    elif kind == "structure":
        members = {
            member: ARN_ONLY if member.endswith("Arn") and spec["shape"] == TABLE_ARN_SHAPE
            else rename(spec["shape"], table_context)
            for member, spec in shape["members"].items()
        }
        required = [m for m in shape.get("required", []) if m not in NOT_REQUIRED.get(name, [])]
        required += [m for m in EXTRA_REQUIRED.get(name, []) if m not in required]
        listed = [m for m in VALIDATION_ORDER.get(name, []) if m in members]
        out["members"] = members
        out["required"] = required
        out["order"] = listed + [m for m in members if m not in listed]
    return out


def rename(shape_name: str, table_context: str) -> str:
    if shape_name == TABLE_ARN_SHAPE:
        return DATA_TABLE_NAME if table_context == "data" else CONTROL_TABLE_NAME
    return shape_name


def collect(model: dict[str, Any]) -> dict[str, Any]:
    """Operations and every input shape they reach, with divergences applied."""
    source_shapes = model["shapes"]
    shapes: dict[str, Any] = {
        DATA_TABLE_NAME: table_name_shape("data"),
        CONTROL_TABLE_NAME: table_name_shape("control"),
        ARN_ONLY: {"type": "string"},
    }
    contexts: dict[str, str] = {}
    operations: dict[str, Any] = {}
    for operation, spec in sorted(model["operations"].items()):
        input_shape = spec.get("input", {}).get("shape")
        context = "data" if operation in DATA_PLANE_OPERATIONS else "control"
        entry: dict[str, Any] = {"input": input_shape}
        if operation in TABLE_NAME_PRECHECKS:
            entry["name_prechecks"] = [
                {"member": member, "label": label, "required": required}
                for member, label, required in TABLE_NAME_PRECHECKS[operation]
            ]
        operations[operation] = entry
        if input_shape is not None:
            walk(input_shape, context, source_shapes, shapes, contexts)
    restore_index_copies(shapes)
    return {"operations": operations, "shapes": dict(sorted(shapes.items()))}


def restore_index_copies(shapes: dict[str, Any]) -> None:
    """RESTORE_INDEX_ORDER: the restore inputs' index overrides as copies."""
    for element, order in RESTORE_INDEX_ORDER.items():
        members = shapes[element]["members"]
        copy = {**shapes[element], "order": order + [m for m in shapes[element]["order"] if m not in order]}
        assert set(copy["order"]) == set(members)
        shapes[element + RESTORE_SUFFIX] = copy
        list_name = element + "List"
        shapes[list_name + RESTORE_SUFFIX] = {**shapes[list_name], "member": element + RESTORE_SUFFIX}
        for input_shape in RESTORE_INPUTS:
            for member, target in shapes[input_shape]["members"].items():
                if target == list_name:
                    shapes[input_shape]["members"][member] = list_name + RESTORE_SUFFIX


def walk(name: str, context: str, source: dict[str, Any], shapes: dict[str, Any], contexts: dict[str, str]) -> None:
    if name in (DATA_TABLE_NAME, CONTROL_TABLE_NAME, ARN_ONLY):
        return
    if name in shapes:
        if contexts.get(name) != context and references_table_arn(name, source, set()):
            raise SystemExit(f"shape {name} holds a TableArn and is used by data and control operations")
        return
    converted = convert_shape(name, source[name], context)
    shapes[name] = converted
    contexts[name] = context
    for child in children(converted):
        walk(child, context, source, shapes, contexts)


def children(shape: dict[str, Any]) -> list[str]:
    if shape["type"] == "list":
        return [shape["member"]]
    if shape["type"] == "map":
        return [shape["key"], shape["value"]]
    if shape["type"] == "structure":
        return list(shape["members"].values())
    return []


def references_table_arn(name: str, source: dict[str, Any], seen: set[str]) -> bool:
    if name == TABLE_ARN_SHAPE:
        return True
    if name in seen:
        return False
    seen.add(name)
    shape = source[name]
    nested = []
    if shape["type"] == "list":
        nested = [shape["member"]["shape"]]
    elif shape["type"] == "map":
        nested = [shape["value"]["shape"]]
    elif shape["type"] == "structure":
        nested = [spec["shape"] for spec in shape["members"].values()]
    return any(references_table_arn(child, source, seen) for child in nested)


def render() -> str:
    model, source = load_botocore_model()
    data = {"source": f"{source}: data/dynamodb/2012-08-10/service-2.json", **collect(model)}
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    arguments = parser.parse_args(argv)
    text = render()
    if arguments.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale; run tools/generate_shapes.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

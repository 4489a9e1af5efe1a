"""Request-shape validation (dynastore/ops/shapes.py) against DynamoDB's answers.

Expected texts come from dynalite's conformance tests (test/helpers.js
assertType, test/<operation>.js assertValidation), dynoxide, and recorded
live answers of the service; cases whose order DynamoDB does not keep stable
compare the set of errors.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dynastore.errors import DynamoDBError, SerializationException, ValidationException
from dynastore.ops import ALL_OPERATIONS
from dynastore.ops.shapes import DOCUMENT_CHECK_MAX_DEPTH, VALIDATORS, validate_request

ROOT = Path(__file__).resolve().parents[2]
CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl "
    "and java.lang.Class are in module java.base of loader 'bootstrap')"
)
START = "Start of structure or map found where not expected"
FIELD = "Unexpected field type"
VALUE = "Unexpected value type in payload"
PKG = "com.amazonaws.dynamodb.v20120810."
SCALARS = ["23", True, 23, -2147483648, 2147483648, 34.56]
NAME_PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"


def nest(path: str, value: Any) -> dict[str, Any]:
    """dynalite's assertType request builder: 'Key.a.L.0.S' -> nested dicts/lists."""
    pieces = path.split(".")
    data: dict[str, Any] = {}
    child: Any = data
    for index, piece in enumerate(pieces[:-1]):
        fresh: Any = [] if pieces[index + 1] == "0" else {}
        if isinstance(child, list):
            child.append(fresh)
        else:
            child[piece] = fresh
        child = fresh
    if isinstance(child, list):
        child.append(value)
    else:
        child[pieces[-1]] = value
    return data


def type_messages(kind: str, detail: str = "") -> list[tuple[Any, str]]:
    """(value, message) pairs of dynalite's assertType for one expected type."""
    if kind == "String":
        return [
            (True, "TRUE_VALUE cannot be converted to String"),
            (False, "FALSE_VALUE cannot be converted to String"),
            (23, "NUMBER_VALUE cannot be converted to String"),
            (-2147483648, "NUMBER_VALUE cannot be converted to String"),
            (2147483648, "NUMBER_VALUE cannot be converted to String"),
            (34.56, "DECIMAL_VALUE cannot be converted to String"),
            ([], "Unrecognized collection type class java.lang.String"),
            ({}, START),
        ]
    if kind == "Boolean":
        return [
            ("23", "Unexpected token received from parser"),
            (23, "NUMBER_VALUE cannot be converted to Boolean"),
            (-2147483648, "NUMBER_VALUE cannot be converted to Boolean"),
            (2147483648, "NUMBER_VALUE cannot be converted to Boolean"),
            (34.56, "DECIMAL_VALUE cannot be converted to Boolean"),
            ([], "Unrecognized collection type class java.lang.Boolean"),
            ({}, START),
        ]
    if kind in ("Integer", "Long"):
        return [
            ("23", f"STRING_VALUE cannot be converted to {kind}"),
            (True, f"TRUE_VALUE cannot be converted to {kind}"),
            (False, f"FALSE_VALUE cannot be converted to {kind}"),
            ([], f"Unrecognized collection type class java.lang.{kind}"),
            ({}, START),
        ]
    if kind == "Blob":
        bad = "only base-64-encoded strings are convertible to bytes"
        return [(value, bad) for value in [True, 23, -2147483648, 2147483648, 34.56]] + [
            ([], "Unrecognized collection type class java.nio.ByteBuffer"),
            ({}, START),
            ("23456", "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
            ("=+/=", "Invalid last non-pad Base64 character dectected"),
            ("+/+=", "Invalid last non-pad Base64 character dectected"),
        ]
    if kind == "List":
        return [(value, FIELD) for value in SCALARS] + [({}, START)]
    if kind == "ParameterizedList":
        return [(value, CAST) for value in SCALARS] + [({}, START)]
    if kind == "Map":
        return [(value, FIELD) for value in SCALARS] + [
            ([], f"Unrecognized collection type java.util.Map<java.lang.String, {detail}>")
        ]
    if kind == "ParameterizedMap":
        return [(value, CAST) for value in SCALARS] + [
            ([], f"Unrecognized collection type java.util.Map<java.lang.String, {PKG}AttributeValue>")
        ]
    if kind == "ValueStruct":
        return [(value, VALUE) for value in SCALARS] + [
            ([], f"Unrecognized collection type class {PKG}{detail}")
        ]
    if kind == "FieldStruct":
        return [(value, FIELD) for value in SCALARS] + [
            ([], f"Unrecognized collection type class {PKG}{detail}")
        ]
    raise AssertionError(kind)


def attribute_value_cases(path: str, position: str) -> list[tuple[str, str, str]]:
    """dynalite's AttrStruct: every member of an AttributeValue, nested in L and M."""
    return [
        (path, position, "AttributeValue"),
        (f"{path}.S", "String", ""),
        (f"{path}.N", "String", ""),
        (f"{path}.B", "Blob", ""),
        (f"{path}.BOOL", "Boolean", ""),
        (f"{path}.NULL", "Boolean", ""),
        (f"{path}.SS", "List", ""),
        (f"{path}.SS.0", "String", ""),
        (f"{path}.NS", "List", ""),
        (f"{path}.NS.0", "String", ""),
        (f"{path}.BS", "List", ""),
        (f"{path}.BS.0", "Blob", ""),
        (f"{path}.L", "List", ""),
        (f"{path}.L.0", "ValueStruct", "AttributeValue"),
        (f"{path}.L.0.BS", "List", ""),
        (f"{path}.L.0.BS.0", "Blob", ""),
        (f"{path}.M", "Map", f"{PKG}AttributeValue"),
        (f"{path}.M.a", "ValueStruct", "AttributeValue"),
        (f"{path}.M.a.BS", "List", ""),
        (f"{path}.M.a.BS.0", "Blob", ""),
    ]


AV_MAP = f"{PKG}AttributeValue"
TYPE_CASES: list[tuple[str, str, str, str]] = [
    ("GetItem", "TableName", "String", ""),
    ("GetItem", "Key", "Map", AV_MAP),
    *[("GetItem", *case) for case in attribute_value_cases("Key.Attr", "ValueStruct")],
    ("GetItem", "AttributesToGet", "List", ""),
    ("GetItem", "AttributesToGet.0", "String", ""),
    ("GetItem", "ConsistentRead", "Boolean", ""),
    ("GetItem", "ReturnConsumedCapacity", "String", ""),
    ("GetItem", "ExpressionAttributeNames", "Map", "java.lang.String"),
    ("GetItem", "ExpressionAttributeNames.Attr", "String", ""),
    ("GetItem", "ProjectionExpression", "String", ""),
    ("PutItem", "Item", "Map", AV_MAP),
    *[("PutItem", *case) for case in attribute_value_cases("Item.Attr", "ValueStruct")],
    ("PutItem", "Expected", "Map", f"{PKG}ExpectedAttributeValue"),
    ("PutItem", "Expected.Attr", "ValueStruct", "ExpectedAttributeValue"),
    ("PutItem", "Expected.Attr.Exists", "Boolean", ""),
    *[("PutItem", *case) for case in attribute_value_cases("Expected.Attr.Value", "FieldStruct")],
    ("PutItem", "Expected.Attr.AttributeValueList", "List", ""),
    ("PutItem", "Expected.Attr.AttributeValueList.0", "ValueStruct", "AttributeValue"),
    ("PutItem", "ExpressionAttributeValues", "Map", AV_MAP),
    ("UpdateItem", "AttributeUpdates", "Map", f"{PKG}AttributeValueUpdate"),
    ("UpdateItem", "AttributeUpdates.Attr", "ValueStruct", "AttributeValueUpdate"),
    ("UpdateItem", "AttributeUpdates.Attr.Action", "String", ""),
    ("Query", "Limit", "Integer", ""),
    ("Query", "ScanIndexForward", "Boolean", ""),
    ("Query", "KeyConditions", "Map", f"{PKG}Condition"),
    ("Query", "KeyConditions.Attr", "ValueStruct", "Condition"),
    ("Query", "ExclusiveStartKey", "Map", AV_MAP),
    ("Scan", "Segment", "Integer", ""),
    ("Scan", "TotalSegments", "Integer", ""),
    ("BatchGetItem", "RequestItems", "Map", f"{PKG}KeysAndAttributes"),
    ("BatchGetItem", "RequestItems.Attr", "ValueStruct", "KeysAndAttributes"),
    ("BatchGetItem", "RequestItems.Attr.Keys", "List", ""),
    ("BatchGetItem", "RequestItems.Attr.Keys.0", "ParameterizedMap", ""),
    *[("BatchGetItem", *case) for case in attribute_value_cases("RequestItems.Attr.Keys.0.Attr", "ValueStruct")][:4],
    ("BatchGetItem", "RequestItems.Attr.ConsistentRead", "Boolean", ""),
    ("BatchWriteItem", "RequestItems", "Map", f"java.util.List<{PKG}WriteRequest>"),
    ("BatchWriteItem", "RequestItems.Attr", "ParameterizedList", ""),
    ("BatchWriteItem", "RequestItems.Attr.0", "ValueStruct", "WriteRequest"),
    ("BatchWriteItem", "RequestItems.Attr.0.DeleteRequest", "FieldStruct", "DeleteRequest"),
    ("BatchWriteItem", "RequestItems.Attr.0.DeleteRequest.Key", "Map", AV_MAP),
    ("BatchWriteItem", "RequestItems.Attr.0.PutRequest", "FieldStruct", "PutRequest"),
    ("BatchWriteItem", "RequestItems.Attr.0.PutRequest.Item.Attr", "ValueStruct", "AttributeValue"),
    ("CreateTable", "AttributeDefinitions", "List", ""),
    ("CreateTable", "AttributeDefinitions.0", "ValueStruct", "AttributeDefinition"),
    ("CreateTable", "AttributeDefinitions.0.AttributeType", "String", ""),
    ("CreateTable", "KeySchema.0", "ValueStruct", "KeySchemaElement"),
    ("CreateTable", "ProvisionedThroughput", "FieldStruct", "ProvisionedThroughput"),
    ("CreateTable", "ProvisionedThroughput.ReadCapacityUnits", "Long", ""),
    ("CreateTable", "ProvisionedThroughput.WriteCapacityUnits", "Long", ""),
    ("CreateTable", "LocalSecondaryIndexes.0.Projection", "FieldStruct", "Projection"),
    ("CreateTable", "LocalSecondaryIndexes.0.Projection.NonKeyAttributes.0", "String", ""),
    ("CreateTable", "GlobalSecondaryIndexes.0.KeySchema", "List", ""),
    ("UpdateTable", "GlobalSecondaryIndexUpdates.0.Create", "FieldStruct", "CreateGlobalSecondaryIndexAction"),
    ("TransactWriteItems", "TransactItems", "List", ""),
    ("TransactWriteItems", "TransactItems.0", "ValueStruct", "TransactWriteItem"),
    ("TransactWriteItems", "TransactItems.0.Put", "FieldStruct", "Put"),
    ("TransactWriteItems", "TransactItems.0.Put.Item", "Map", AV_MAP),
    ("TagResource", "Tags", "List", ""),
    ("TagResource", "Tags.0", "ValueStruct", "Tag"),
    ("TagResource", "Tags.0.Key", "String", ""),
    ("ListTables", "Limit", "Integer", ""),
    ("UpdateTimeToLive", "TimeToLiveSpecification.Enabled", "Boolean", ""),
]


def expanded_type_cases() -> list[Any]:
    cases = []
    for operation, path, kind, detail in TYPE_CASES:
        for value, message in type_messages(kind, detail):
            label = f"{operation}:{path}:{type(value).__name__}:{value!r}"[:90]
            cases.append(pytest.param(operation, nest(path, value), message, id=label))
    return cases


@pytest.mark.parametrize(("operation", "request_body", "message"), expanded_type_cases())
def test_type_mismatch_is_a_serialization_exception(
    operation: str, request_body: dict[str, Any], message: str
) -> None:
    with pytest.raises(SerializationException) as excinfo:
        validate_request(operation, request_body)
    assert excinfo.value.message == message


@pytest.mark.parametrize(
    ("operation", "request_body", "message"),
    [
        # The first mistake in document order is the one reported.
        ("GetItem", {"TableName": 1, "Key": []}, "NUMBER_VALUE cannot be converted to String"),
        ("GetItem", {"Key": [], "TableName": 1},
         f"Unrecognized collection type java.util.Map<java.lang.String, {AV_MAP}>"),
        # Type errors come before constraint errors, wherever they are.
        ("GetItem", {"TableName": "a;", "ConsistentRead": []},
         "Unrecognized collection type class java.lang.Boolean"),
        ("CreateTable", {"ProvisionedThroughput": {"ReadCapacityUnits": "1"}},
         "STRING_VALUE cannot be converted to Long"),
        ("PutItem", {"TableName": "abc", "Item": {"a": {"L": [{"M": {"b": {"NS": [1]}}}]}}},
         "NUMBER_VALUE cannot be converted to String"),
        ("PutItem", {"TableName": "abc", "Item": {"a": {"B": "YR=="}}},
         "Invalid last non-pad Base64 character dectected"),
        ("PutItem", {"TableName": "abc", "Item": {"a": {"B": "é==="}}},
         "Invalid last non-pad Base64 character dectected"),
    ],
)
def test_serialization_order(operation: str, request_body: dict[str, Any], message: str) -> None:
    with pytest.raises(SerializationException) as excinfo:
        validate_request(operation, request_body)
    assert excinfo.value.message == message


def constraint(value: str | None, path: str, text: str) -> str:
    shown = "null" if value is None else f"'{value}'"
    return f"Value {shown} at '{path}' failed to satisfy constraint: {text}"


def detected(*errors: str) -> str:
    plural = "s" if len(errors) > 1 else ""
    return f"{len(errors)} validation error{plural} detected: " + "; ".join(errors)


NOT_NULL = "Member must not be null"
LONG_NAME = "a" * 256
VALIDATION_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("GetItem", {}, detected(
        constraint(None, "tableName", NOT_NULL), constraint(None, "key", NOT_NULL))),
    ("GetItem", {"TableName": "a;"}, detected(
        constraint("a;", "tableName", NAME_PATTERN), constraint(None, "key", NOT_NULL))),
    ("GetItem", {"TableName": LONG_NAME}, detected(
        constraint(LONG_NAME, "tableName", "Member must have length less than or equal to 255"),
        constraint(None, "key", NOT_NULL))),
    # Data-plane table names: min 1, pattern only on a non-empty name (dynoxide).
    ("PutItem", {"TableName": "", "Item": {}}, detected(
        constraint("", "tableName", "Member must have length greater than or equal to 1"))),
    ("GetItem", {"TableName": "abc;", "ReturnConsumedCapacity": "hi", "AttributesToGet": []}, detected(
        constraint("hi", "returnConsumedCapacity",
                   "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"),
        constraint("[]", "attributesToGet", "Member must have length greater than or equal to 1"),
        constraint("abc;", "tableName", NAME_PATTERN),
        constraint(None, "key", NOT_NULL))),
    ("PutItem", {"TableName": "abc", "Item": {}, "ReturnValues": "hi"}, detected(
        constraint("hi", "returnValues", "Member must satisfy enum value set: "
                   "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"))),
    ("DeleteItem", {"TableName": "abc", "Key": {}, "Expected": {"a": {"ComparisonOperator": "x"}}},
     detected(constraint("x", "expected.a.member.comparisonOperator",
                         "Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, "
                         "EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"))),
    ("UpdateItem", {"TableName": "abc", "Key": {}, "AttributeUpdates": {"a": {"Action": "x"}}},
     detected(constraint("x", "attributeUpdates.a.member.action",
                         "Member must satisfy enum value set: [ADD, PUT, DELETE]"))),
    ("Query", {"TableName": "abc", "Select": "x", "Limit": 0, "ConditionalOperator": "x"}, detected(
        constraint("x", "select", "Member must satisfy enum value set: "
                   "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]"),
        constraint("x", "conditionalOperator", "Member must satisfy enum value set: [OR, AND]"),
        constraint("0", "limit", "Member must have value greater than or equal to 1"))),
    ("Query", {"TableName": "abc", "IndexName": "a;"}, detected(
        constraint("a;", "indexName", NAME_PATTERN),
        constraint("a;", "indexName", "Member must have length greater than or equal to 3"))),
    ("Scan", {"TableName": "abc", "Segment": -1, "TotalSegments": 0}, detected(
        constraint("0", "totalSegments", "Member must have value greater than or equal to 1"),
        constraint("-1", "segment", "Member must have value greater than or equal to 0"))),
    ("Scan", {"TableName": "abc", "Segment": 1000000, "TotalSegments": 1000001}, detected(
        constraint("1000001", "totalSegments", "Member must have value less than or equal to 1000000"),
        constraint("1000000", "segment", "Member must have value less than or equal to 999999"))),
    ("BatchGetItem", {}, detected(constraint(None, "requestItems", NOT_NULL))),
    ("BatchGetItem", {"RequestItems": {}}, detected(
        constraint("{}", "requestItems", "Member must have length greater than or equal to 1"))),
    ("BatchGetItem", {"RequestItems": {"abc": {"Keys": []}}}, detected(
        constraint("[]", "requestItems.abc.member.keys",
                   "Member must have length greater than or equal to 1"))),
    ("BatchWriteItem", {"RequestItems": {"abc": [{"PutRequest": {}}]}}, detected(
        constraint(None, "requestItems.abc.member.1.member.putRequest.item", NOT_NULL))),
    ("TransactWriteItems", {"TransactItems": []}, detected(
        constraint("[]", "transactItems", "Member must have length greater than or equal to 1"))),
    ("TransactWriteItems", {"TransactItems": [{"Put": {}}, {"Delete": {"TableName": "t"}}]}, detected(
        constraint(None, "transactItems.1.member.put.item", NOT_NULL),
        constraint(None, "transactItems.1.member.put.tableName", NOT_NULL),
        constraint(None, "transactItems.2.member.delete.key", NOT_NULL))),
    ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "abc"}}]}, detected(
        constraint(None, "transactItems.1.member.get.key", NOT_NULL))),
    # CreateTable checks its table name by hand first (dynalite createTable tests).
    ("CreateTable", {}, "The parameter 'TableName' is required but was not present in the request"),
    ("CreateTable", {"TableName": ""},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("CreateTable", {"TableName": "a;"},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("CreateTable", {"TableName": LONG_NAME},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("CreateTable", {"TableName": "abc;"}, detected(
        constraint(None, "attributeDefinitions", NOT_NULL),
        constraint("abc;", "tableName", NAME_PATTERN),
        constraint(None, "keySchema", NOT_NULL))),
    ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [], "ProvisionedThroughput": {}}, detected(
        constraint(None, "provisionedThroughput.writeCapacityUnits", NOT_NULL),
        constraint(None, "provisionedThroughput.readCapacityUnits", NOT_NULL),
        constraint(None, "keySchema", NOT_NULL))),
    ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [], "KeySchema": [],
                     "ProvisionedThroughput": {"ReadCapacityUnits": -1, "WriteCapacityUnits": -1}}, detected(
        constraint("-1", "provisionedThroughput.writeCapacityUnits",
                   "Member must have value greater than or equal to 1"),
        constraint("-1", "provisionedThroughput.readCapacityUnits",
                   "Member must have value greater than or equal to 1"),
        constraint("[]", "keySchema", "Member must have length greater than or equal to 1"))),
    ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [{}], "KeySchema": [{"KeyType": "HASH", "AttributeName": "a"}]},
     detected(constraint(None, "attributeDefinitions.1.member.attributeType", NOT_NULL),
              constraint(None, "attributeDefinitions.1.member.attributeName", NOT_NULL))),
    ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [{"AttributeName": "b", "AttributeType": "SS"}],
                     "KeySchema": [{"KeyType": "HASH", "AttributeName": "a"}]},
     detected(constraint("SS", "attributeDefinitions.1.member.attributeType",
                         "Member must satisfy enum value set: [B, N, S]"))),
    # Live answers recorded against the service (model 2012-08-10).
    ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [], "KeySchema": [], "BillingMode": ""},
     detected(constraint("[]", "keySchema", "Member must have length greater than or equal to 1"),
              constraint("", "billingMode", "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"))),
    ("UpdateTable", {"TableName": "abc", "StreamSpecification": {"StreamEnabled": True, "StreamViewType": ""}},
     detected(constraint("", "streamSpecification.streamViewType", "Member must satisfy enum value set: "
                         "[OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES, NEW_IMAGE]"))),
    ("UpdateTable", {"TableName": "abc", "SSESpecification": {"KMSMasterKeyId": ""}},
     detected(constraint("", "sSESpecification.kMSMasterKeyId",
                         "Member must have length greater than or equal to 1"))),
    # live 2026 (ack-api-quirks DDB-TABLE-442): UpdateTable's short name gets the constraint text
    ("UpdateTable", {"TableName": "ab"},
     detected(constraint("ab", "tableName", "Member must have length greater than or equal to 3"))),
    ("UpdateTable", {}, "The parameter 'TableName' is required but was not present in the request"),
    ("DeleteTable", {}, "The parameter 'TableName' is required but was not present in the request"),
    # dynalite describeTimeToLive tests
    ("DescribeTimeToLive", {}, "The parameter 'TableName' is required but was not present in the request"),
    ("DescribeTimeToLive", {"TableName": "a;"},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("DescribeTimeToLive", {"TableName": LONG_NAME},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("DescribeTimeToLive", {"TableName": "abc;"}, detected(constraint("abc;", "tableName", NAME_PATTERN))),
    ("UpdateTimeToLive", {"TableName": "abc"}, detected(constraint(None, "timeToLiveSpecification", NOT_NULL))),
    ("UpdateTimeToLive", {"TableName": "abc", "TimeToLiveSpecification": {}}, detected(
        constraint(None, "timeToLiveSpecification.attributeName", NOT_NULL),
        constraint(None, "timeToLiveSpecification.enabled", NOT_NULL))),
    ("UpdateTimeToLive", {"TableName": "abc", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": ""}},
     detected(constraint("", "timeToLiveSpecification.attributeName",
                         "Member must have length greater than or equal to 1"))),
    ("UpdateContinuousBackups", {"TableName": "abc", "PointInTimeRecoverySpecification": {}}, detected(
        constraint(None, "pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled", NOT_NULL))),
    ("UpdateContinuousBackups", {"TableName": "abc", "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": -1}}, detected(
        constraint("-1", "pointInTimeRecoverySpecification.recoveryPeriodInDays",
                   "Member must have value greater than or equal to 1"))),
    ("ListTables", {"Limit": 0}, detected(
        constraint("0", "limit", "Member must have value greater than or equal to 1"))),
    ("ListTables", {"Limit": 101}, detected(
        constraint("101", "limit", "Member must have value less than or equal to 100"))),
    ("CreateBackup", {"TableName": "abc", "BackupName": ""}, detected(
        constraint("", "backupName", NAME_PATTERN),
        constraint("", "backupName", "Member must have length greater than or equal to 3"))),
    ("EnableKinesisStreamingDestination", {"TableName": "abc", "StreamArn": ""}, detected(
        constraint("", "streamArn", "Member must have length greater than or equal to 37"))),
    ("DeleteResourcePolicy", {"ResourceArn": "arn:aws:dynamodb:us-east-1:1:table/t", "ExpectedRevisionId": ""},
     detected(constraint("", "expectedRevisionId", "Member must have length greater than or equal to 1"))),
    ("UpdateContributorInsights", {"TableName": "abc", "ContributorInsightsAction": ""}, detected(
        constraint("", "contributorInsightsAction", "Member must satisfy enum value set: [ENABLE, DISABLE]"))),
    ("UpdateContributorInsights", {"TableName": "abc", "ContributorInsightsAction": "ENABLE",
                                   "ContributorInsightsMode": ""}, detected(
        constraint("", "contributorInsightsMode",
                   "Member must satisfy enum value set: [THROTTLED_KEYS, ACCESSED_AND_THROTTLED_KEYS]"))),
    ("DescribeContributorInsights", {"TableName": "abc", "IndexName": ""},
     "IndexName must be at least 3 characters long and at most 255 characters long"),
    ("RestoreTableFromBackup", {"TargetTableName": "", "BackupArn": "arn:aws:dynamodb:us-east-1:1:table/t/backup/1"},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("DescribeGlobalTable", {"GlobalTableName": ""},
     "TableName must be at least 3 characters long and at most 255 characters long"),
    ("RestoreTableFromBackup", {"TargetTableName": "abc", "BackupArn": "",
                                "ProvisionedThroughputOverride": {}}, detected(
        constraint(None, "provisionedThroughputOverride.writeCapacityUnits", NOT_NULL),
        constraint(None, "provisionedThroughputOverride.readCapacityUnits", NOT_NULL))),
    ("UntagResource", {"ResourceArn": "arn:aws:dynamodb:us-east-1:1:table/t"}, detected(
        constraint(None, "tagKeys", NOT_NULL))),
]


@pytest.mark.parametrize(("operation", "request_body", "message"), VALIDATION_CASES,
                         ids=[f"{case[0]}-{index}" for index, case in enumerate(VALIDATION_CASES)])
def test_constraint_violations(operation: str, request_body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationException) as excinfo:
        validate_request(operation, request_body)
    assert excinfo.value.message == message


@pytest.mark.parametrize(
    ("operation", "request_body", "errors"),
    [
        # DynamoDB's order between errors of one member varies; compare sets.
        ("DescribeTable", {"TableName": ""}, {
            constraint("", "tableName", "Member must have length greater than or equal to 3"),
            constraint("", "tableName", NAME_PATTERN)}),
        ("ListTables", {"ExclusiveStartTableName": ""}, {
            constraint("", "exclusiveStartTableName", NAME_PATTERN),
            constraint("", "exclusiveStartTableName", "Member must have length greater than or equal to 3")}),
        ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [], "KeySchema": [],
                         "GlobalSecondaryIndexes": [{"IndexName": "", "KeySchema": [],
                                                     "Projection": {}}]}, {
            constraint("[]", "keySchema", "Member must have length greater than or equal to 1"),
            constraint("[]", "globalSecondaryIndexes.1.member.keySchema",
                       "Member must have length greater than or equal to 1"),
            constraint("", "globalSecondaryIndexes.1.member.indexName",
                       "Member must have length greater than or equal to 3"),
            constraint("", "globalSecondaryIndexes.1.member.indexName", NAME_PATTERN)}),
    ],
)
def test_constraint_violations_as_a_set(operation: str, request_body: dict[str, Any], errors: set[str]) -> None:
    with pytest.raises(ValidationException) as excinfo:
        validate_request(operation, request_body)
    prefix = f"{len(errors)} validation errors detected: "
    assert excinfo.value.message.startswith(prefix)
    assert set(excinfo.value.message[len(prefix):].split("; ")) == errors


MAP_KEYS = (
    "Map keys must satisfy constraint: [Member must have length less than or equal to 255, "
    "Member must have length greater than or equal to 3, " + NAME_PATTERN + "]"
)


def test_batch_map_keys_and_values() -> None:
    """dynalite batchWriteItem: a short table name and an empty request list."""
    with pytest.raises(ValidationException) as excinfo:
        validate_request("BatchWriteItem", {"RequestItems": {"a": []}})
    assert excinfo.value.message == detected(
        constraint("{a=[]}", "requestItems", MAP_KEYS),
        constraint("{a=[]}", "requestItems", "Map value must satisfy constraint: [Member must have "
                   "length less than or equal to 25, Member must have length greater than or equal to 1]"),
    )


def test_batch_get_short_table_name() -> None:
    with pytest.raises(ValidationException) as excinfo:
        validate_request("BatchGetItem", {"RequestItems": {"a": {}}, "ReturnConsumedCapacity": "hi"})
    assert excinfo.value.message == detected(
        constraint("hi", "returnConsumedCapacity", "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"),
        constraint("{a=KeysAndAttributes()}", "requestItems", MAP_KEYS),
        constraint(None, "requestItems.a.member.keys", NOT_NULL),
    )


def test_batch_get_more_than_100_keys() -> None:
    keys = [{"a": {"S": str(index)}} for index in range(101)]
    with pytest.raises(ValidationException) as excinfo:
        validate_request("BatchGetItem", {"RequestItems": {"abc": {"Keys": keys}}})
    message = excinfo.value.message
    assert message.startswith("1 validation error detected: Value '[{a=AttributeValue(s=0)}, ")
    assert message.endswith(
        "' at 'requestItems.abc.member.keys' failed to satisfy constraint: "
        "Member must have length less than or equal to 100"
    )


def test_at_most_ten_errors_are_listed() -> None:
    requests = [{"PutRequest": {}} for _ in range(12)]
    with pytest.raises(ValidationException) as excinfo:
        validate_request("BatchWriteItem", {"RequestItems": {"abc": requests}})
    message = excinfo.value.message
    assert message.startswith("10 validation errors detected: ")
    assert message.count("failed to satisfy constraint") == 10


@pytest.mark.parametrize(
    ("operation", "request_body"),
    [
        ("GetItem", {"TableName": "abc", "Key": {"a": {"S": "x"}}}),
        ("GetItem", {"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/abc", "Key": {}}),
        ("GetItem", {"TableName": "ab", "Key": {}}),  # data plane: only min 1 applies
        ("GetItem", {"TableName": "abc", "Key": {}, "Unknown": [1, 2], "ConsistentRead": None}),
        ("PutItem", {"TableName": "abc", "Item": {
            "s": {"S": "x"}, "n": {"N": "1"}, "b": {"B": "YQ=="}, "e": {"B": ""}, "t": {"BOOL": False},
            "z": {"NULL": True}, "ss": {"SS": ["a"]}, "ns": {"NS": ["1"]}, "bs": {"BS": ["YQ=="]},
            "l": {"L": [{"S": "a"}, {"M": {"x": {"N": "2"}}}]}, "m": {"M": {}}, "odd": {"X": 1},
            "empty": {}}}),
        ("Query", {"TableName": "abc", "KeyConditionExpression": "a = :a",
                   "ExpressionAttributeValues": {":a": {"S": "x"}}, "Limit": 10}),
        ("Scan", {"TableName": "abc", "Segment": 0, "TotalSegments": 1}),
        ("CreateTable", {"TableName": "abc", "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
                         "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
                         "BillingMode": "PAY_PER_REQUEST"}),
        ("ListTables", {}),
        ("DescribeEndpoints", {}),
        ("TagResource", {"Tags": [{}]}),  # the service answers tag problems itself
        ("TagResource", {"Tags": [{"Key": "", "Value": "v" * 257}]}),
        ("UntagResource", {"ResourceArn": "arn", "TagKeys": ["", "k" * 129]}),
        ("DescribeBackup", {"BackupArn": ""}),  # "Invalid Backup ARN" comes later
        ("ExportTableToPointInTime", {"TableArn": "", "S3Bucket": "bucket"}),
        ("NotAnOperation", {"anything": 1}),
    ],
)
def test_valid_requests_pass(operation: str, request_body: dict[str, Any]) -> None:
    assert validate_request(operation, request_body) is None


@pytest.mark.parametrize(
    ("given", "expected"),
    [("true", True), ("TRUE", True), ("1", True), ("yes", True),
     ("false", False), ("No", False), ("0", False)],
)
def test_boolean_words_are_converted(given: str, expected: bool) -> None:
    request = {"TableName": "abc", "Key": {"a": {"BOOL": given}}, "ConsistentRead": given}
    validate_request("GetItem", request)
    assert request["ConsistentRead"] is expected
    assert request["Key"]["a"]["BOOL"] is expected


def test_float_for_an_integer_is_truncated() -> None:
    request = {"TableName": "abc", "Limit": 2.9, "KeyConditionExpression": "a = :a"}
    validate_request("Query", request)
    assert request["Limit"] == 2 and type(request["Limit"]) is int


def test_converted_value_is_still_checked() -> None:
    with pytest.raises(ValidationException) as excinfo:
        validate_request("Query", {"TableName": "abc", "Limit": 0.5})
    assert excinfo.value.message == detected(
        constraint("0", "limit", "Member must have value greater than or equal to 1"))


def test_every_operation_has_a_validator() -> None:
    assert set(ALL_OPERATIONS) <= set(VALIDATORS)


ODD_VALUES: list[Any] = [None, "", "x" * 300, 0, -1, 1.5, True, [], [None], [{}], {}, {"a": None}, {"a": []}]


@pytest.mark.parametrize("operation", ALL_OPERATIONS)
def test_odd_values_never_crash(operation: str) -> None:
    """Every member of every operation, given odd JSON: a DynamoDB error or a pass."""
    from dynastore.ops.shapes import _COMPILER  # the model as loaded

    input_shape = _input_shape(operation)
    members = list(_COMPILER.shapes[input_shape]["members"]) if input_shape else []
    for member in members:
        for value in ODD_VALUES:
            request = {member: copy.deepcopy(value)}
            try:
                validate_request(operation, request)
            except DynamoDBError:
                pass
            nested = {member: [copy.deepcopy(value)], "Other": value}
            try:
                validate_request(operation, nested)
            except DynamoDBError:
                pass


def _input_shape(operation: str) -> str | None:
    import json

    model = json.loads((ROOT / "dynastore" / "ops" / "service_model.json").read_text())
    return model["operations"][operation]["input"]


def test_runtime_does_not_import_botocore() -> None:
    code = "import sys, dynastore.ops.shapes; print('botocore' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "False"


def test_generated_model_is_fresh() -> None:
    """The committed model is what the generator makes from the botocore it
    names. With another botocore installed (CI takes the newest), the model is
    only regenerated deliberately, so then the generator must still run, and
    any difference is reported as staleness, never as a crash."""
    botocore = pytest.importorskip("botocore")
    recorded = json.loads((ROOT / "dynastore" / "ops" / "service_model.json").read_text())["source"]
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "generate_shapes.py"), "--check"],
        capture_output=True, text=True, cwd=ROOT,
    )
    if recorded.startswith(f"botocore {botocore.__version__}:"):
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 0 or "is stale" in result.stderr, result.stderr


def test_attribute_name_length_counts_utf16_units() -> None:
    """Item attribute names may be 65535 UTF-16 units; an emoji counts twice."""
    validate_request("PutItem", {"TableName": "abc", "Item": {"a" * 65535: {"S": "x"}}})
    name = "\U0001F600" * 32768  # 65536 units in 32768 code points
    with pytest.raises(ValidationException) as excinfo:
        validate_request("PutItem", {"TableName": "abc", "Item": {name: {"S": "x"}}})
    assert excinfo.value.message.endswith(
        "' at 'item' failed to satisfy constraint: Map keys must satisfy constraint: "
        "[Member must have length less than or equal to 65535]"
    )


def test_conversions_reach_nested_values() -> None:
    request = {"TableName": "abc", "Item": {"l": {"L": [{"BOOL": "yes"}, {"M": {"n": {"NULL": "1"}}}]}}}
    validate_request("PutItem", request)
    assert request["Item"]["l"]["L"][0] == {"BOOL": True}
    assert request["Item"]["l"]["L"][1] == {"M": {"n": {"NULL": True}}}


def test_documents_are_refused_long_before_the_recursion_limit() -> None:
    """The checks follow a document's M and L at most DOCUMENT_CHECK_MAX_DEPTH
    levels, whatever Python's recursion limit: a process that raised it (an
    application embedding dynastore) must not run the checks thousands of
    frames deep, where the C stack, not a RecursionError, would end them."""

    def nested(levels: int, kind: str) -> dict[str, object]:
        value: dict[str, object] = {"S": "x"}
        for _ in range(levels):
            value = {"L": [value]} if kind == "L" else {"M": {"a": value}}
        return value

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)
    try:
        for kind in ("L", "M"):
            validate_request("PutItem", {"TableName": "abc", "Item": {"d": nested(DOCUMENT_CHECK_MAX_DEPTH, kind)}})
            for levels in (DOCUMENT_CHECK_MAX_DEPTH + 1, 5_000):
                with pytest.raises(ValidationException, match="^Nesting Levels have exceeded supported limits"):
                    validate_request("GetItem", {"TableName": "abc", "Key": {"k": nested(levels, kind)}})
    finally:
        sys.setrecursionlimit(old_limit)

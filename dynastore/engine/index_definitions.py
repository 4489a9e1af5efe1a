"""Attribute definitions, key schemas and secondary-index definitions of a
request, checked as DynamoDB checks them: the table's key schema, each LSI's
and GSI's (multi-attribute GSI keys included), projections, index names and
counts; and the typed ``IndexDefinition`` of a validated index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynastore import limits
from dynastore.engine.schema import IndexDefinition, KeyAttribute
from dynastore.engine.table_settings import PAY_PER_REQUEST, PROVISIONED, present_throughput
from dynastore.errors import ValidationException, invalid_parameter

TABLE_KEY_SCHEMA_MAX_ELEMENTS = 2


def parse_attribute_definitions(request: Mapping[str, Any]) -> tuple[KeyAttribute, ...]:
    definitions: list[KeyAttribute] = []
    seen: set[str] = set()
    for definition in request.get("AttributeDefinitions") or []:
        name = definition.get("AttributeName")
        if name in seen:
            raise ValidationException(f"Attribute Name is duplicated: {name}")
        seen.add(name)
        definitions.append(KeyAttribute(name=name, type=definition.get("AttributeType")))
    return tuple(definitions)


def parse_key_schema(
    request: Mapping[str, Any], definitions: Sequence[KeyAttribute]
) -> tuple[KeyAttribute, KeyAttribute | None]:
    """(partition key, sort key) of a CreateTable request, typed from its definitions."""
    elements = list(request.get("KeySchema") or [])
    if not elements:  # normally refused earlier by the request-shape check
        raise ValidationException(
            "1 validation error detected: Value null at 'keySchema' failed to satisfy "
            "constraint: Member must not be null"
        )
    names = [element.get("AttributeName") for element in elements]
    defined = {definition.name: definition for definition in definitions}
    if len(names) > len(defined):
        raise ValidationException("Invalid KeySchema: Some index key attribute have no definition")
    check_index_key_schema(elements, definitions)
    partition_key = defined[names[0]]
    sort_key = defined[names[1]] if len(names) == 2 else None
    return partition_key, sort_key


def check_index_key_schema(
    elements: Sequence[Mapping[str, Any]], definitions: Sequence[KeyAttribute]
) -> None:
    """The rules every one- or two-element key schema follows, the table's and
    each index's: attributes defined, distinct, HASH first, RANGE second."""
    names = [str(element.get("AttributeName")) for element in elements]
    defined = [definition.name for definition in definitions]
    if any(name not in defined for name in names):
        raise invalid_parameter(
            "Some index key attributes are not defined in AttributeDefinitions. "
            f"Keys: [{', '.join(names)}], AttributeDefinitions: [{', '.join(defined)}]"
        )
    if len(names) == 2 and names[0] == names[1]:
        raise ValidationException(
            "Both the Hash Key and the Range Key element in the KeySchema have the same name"
        )
    if elements[0].get("KeyType") != "HASH":
        raise ValidationException(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        )
    if len(elements) == 2 and elements[1].get("KeyType") != "RANGE":
        raise ValidationException(
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"
        )


def check_projection(projection: Mapping[str, Any]) -> None:
    projection_type = projection.get("ProjectionType")
    if projection_type is None:
        raise invalid_parameter("Unknown ProjectionType: null")
    non_key = projection.get("NonKeyAttributes")
    if non_key is not None and projection_type != "INCLUDE":
        raise invalid_parameter(
            f"ProjectionType is {projection_type}, but NonKeyAttributes is specified"
        )
    if non_key is None and projection_type == "INCLUDE":
        raise invalid_parameter("ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
    seen: set[str] = set()
    for attribute in non_key or ():
        if attribute in seen:
            raise invalid_parameter(f"Duplicate element in NonKeyAttributes: {attribute}")
        seen.add(attribute)


def _check_local_index(
    index: Mapping[str, Any], definitions: Sequence[KeyAttribute], partition_key: str
) -> None:
    elements = index.get("KeySchema") or []
    name = index.get("IndexName")
    check_index_key_schema(elements, definitions)
    if len(elements) != 2:
        raise invalid_parameter(f"Index KeySchema does not have a range key for index: {name}")
    index_hash = elements[0].get("AttributeName")
    if index_hash != partition_key:
        raise invalid_parameter(
            "Index KeySchema does not have the same leading hash key as table KeySchema for "
            f"index: {name}. index hash key: {index_hash}, table hash key: {partition_key}"
        )
    check_projection(index.get("Projection") or {})


INDEX_KEY_ATTRIBUTES_MAX = limits.GSI_KEY_ATTRIBUTES_MAX
"""Multi-attribute GSI keys: up to four partition and four sort attributes."""


def check_multi_attribute_key_schema(
    elements: Sequence[Mapping[str, Any]], definitions: Sequence[KeyAttribute], name: Any
) -> None:
    """A GSI key schema of more than two elements: HASH elements first (1-4),
    then RANGE elements (0-4), every attribute defined and used once."""
    names = [str(element.get("AttributeName")) for element in elements]
    defined = [definition.name for definition in definitions]
    if any(attribute not in defined for attribute in names):
        raise invalid_parameter(
            "Some index key attributes are not defined in AttributeDefinitions. "
            f"Keys: [{', '.join(names)}], AttributeDefinitions: [{', '.join(defined)}]"
        )
    if len(set(names)) != len(names):
        raise ValidationException("The KeySchema contains multiple key attributes with the same name")
    types = [element.get("KeyType") for element in elements]
    if types[0] != "HASH":
        raise ValidationException(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        )
    hash_count = types.index("RANGE") if "RANGE" in types else len(types)
    if any(key_type != "RANGE" for key_type in types[hash_count:]):
        raise invalid_parameter("All HASH key attributes must precede RANGE key attributes in the KeySchema")
    for kind, count in (("HASH", hash_count), ("RANGE", len(types) - hash_count)):
        if count > INDEX_KEY_ATTRIBUTES_MAX:
            raise invalid_parameter(
                f"The KeySchema exceeds the maximum allowed number of {kind} key attributes"
            )


def check_global_index_key_schema(
    elements: Sequence[Mapping[str, Any]], definitions: Sequence[KeyAttribute], name: Any
) -> None:
    """A GSI's key schema (CreateTable's and UpdateTable's Create): a table's
    rules, or the multi-attribute ones when it has more than two elements or
    two HASH ones (a two-attribute partition key and no sort key: a table's
    two elements must be HASH then RANGE, a GSI's need not)."""
    two_hash = len(elements) == 2 and all(element.get("KeyType") == "HASH" for element in elements)
    if len(elements) > TABLE_KEY_SCHEMA_MAX_ELEMENTS or two_hash:
        check_multi_attribute_key_schema(elements, definitions, name)
    else:
        check_index_key_schema(elements, definitions)


def _check_global_index(
    index: Mapping[str, Any], definitions: Sequence[KeyAttribute], billing_mode: str
) -> None:
    check_global_index_key_schema(index.get("KeySchema") or [], definitions, index.get("IndexName"))
    check_projection(index.get("Projection") or {})
    check_index_throughput(index, billing_mode)


def check_index_throughput(index: Mapping[str, Any], billing_mode: str) -> None:
    name = index.get("IndexName")
    has_throughput = index.get("ProvisionedThroughput") is not None
    if billing_mode == PAY_PER_REQUEST and has_throughput:
        raise invalid_parameter(
            f"ProvisionedThroughput should not be specified for index: {name} when "
            "BillingMode is PAY_PER_REQUEST"
        )
    if billing_mode == PROVISIONED and not has_throughput:
        raise invalid_parameter(f"ProvisionedThroughput is not specified for index: {name}")


def check_create_indexes(
    request: Mapping[str, Any],
    definitions: Sequence[KeyAttribute],
    partition_key: KeyAttribute,
    sort_key: KeyAttribute | None,
    billing_mode: str,
) -> tuple[IndexDefinition, ...]:
    """Validate LocalSecondaryIndexes and GlobalSecondaryIndexes as DynamoDB
    does; return their definitions (LSIs first, then GSIs, each in request order)."""
    local = request.get("LocalSecondaryIndexes")
    global_ = request.get("GlobalSecondaryIndexes")
    for member, indexes in (("LocalSecondaryIndexes", local), ("GlobalSecondaryIndexes", global_)):
        if indexes is not None and len(indexes) == 0:
            raise invalid_parameter(f"List of {member} is empty")
    names: set[str] = set()
    if local:
        if sort_key is None:
            raise invalid_parameter(
                "Table KeySchema does not have a range key, which is required when "
                "specifying a LocalSecondaryIndex"
            )
        for index in local:
            _check_local_index(index, definitions, partition_key.name)
            _claim_index_name(names, index.get("IndexName"))
        if len(local) > limits.LOCAL_SECONDARY_INDEXES_PER_TABLE:
            raise invalid_parameter(
                "Number of LocalSecondaryIndexes exceeds per-table limit of "
                f"{limits.LOCAL_SECONDARY_INDEXES_PER_TABLE}"
            )
    for index in global_ or []:
        _check_global_index(index, definitions, billing_mode)
        _claim_index_name(names, index.get("IndexName"))
    if global_ and len(global_) > limits.GLOBAL_SECONDARY_INDEXES_PER_TABLE:
        raise invalid_parameter(
            "GlobalSecondaryIndex count exceeds the per-table limit of "
            f"{limits.GLOBAL_SECONDARY_INDEXES_PER_TABLE}"
        )
    parsed = [index_definition(index, definitions, "LOCAL") for index in local or []]
    parsed += [index_definition(index, definitions, "GLOBAL") for index in global_ or []]
    check_projected_attribute_count(parsed)
    return tuple(parsed)


def check_projected_attribute_count(indexes: Sequence[IndexDefinition]) -> None:
    """At most 100 INCLUDE'd non-key attributes across a table's indexes."""
    total = sum(len(index.non_key_attributes) for index in indexes)
    if total > limits.PROJECTED_NON_KEY_ATTRIBUTES_PER_TABLE:
        raise invalid_parameter(
            "Number of projected attributes in all indexes exceeds limit of "
            f"{limits.PROJECTED_NON_KEY_ATTRIBUTES_PER_TABLE}"
        )


def index_definition(
    index: Mapping[str, Any], definitions: Sequence[KeyAttribute], kind: str, status: str = "ACTIVE"
) -> IndexDefinition:
    """An already validated index of a request, typed from AttributeDefinitions."""
    defined = {definition.name: definition for definition in definitions}
    elements = index.get("KeySchema") or []
    projection = index.get("Projection") or {}
    read, write = present_throughput(index) or (0, 0)
    on_demand = index.get("OnDemandThroughput") or {}
    return IndexDefinition(
        name=str(index.get("IndexName")),
        kind=kind,
        partition_keys=tuple(
            defined[e["AttributeName"]] for e in elements if e.get("KeyType") == "HASH"
        ),
        sort_keys=tuple(
            defined[e["AttributeName"]] for e in elements if e.get("KeyType") == "RANGE"
        ),
        projection_type=str(projection.get("ProjectionType")),
        non_key_attributes=tuple(projection.get("NonKeyAttributes") or ()),
        status=status,
        read_capacity_units=read,
        write_capacity_units=write,
        on_demand_max_read_units=on_demand.get("MaxReadRequestUnits"),
        on_demand_max_write_units=on_demand.get("MaxWriteRequestUnits"),
        item_partition=kind == "LOCAL",
    )


def _claim_index_name(names: set[str], name: Any) -> None:
    if name in names:
        raise invalid_parameter(f"Duplicate index name: {name}")
    names.add(name)

"""DynamoDB's PartiQL error texts, in one place.

Sources: real-AWS pinned test suites in the code corpus (the parser's
"wasn't well formed" details, aliasing, number errors), and the message
catalogue of the PartiQL library DynamoDB Local shares with the service
(``ddb.partiql.shared``). What only DynamoDB Local confirms is listed in
docs/partiql.md as unconfirmed.
"""

from __future__ import annotations

from dynastore.errors import ValidationException

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "
LEFTOVER = "Unexpected token after expression"
UNEXPECTED_TERM = "Unexpected term"
UNEXPECTED_KEYWORD = "Unexpected keyword"
UNEXPECTED_OPERATOR = "Unexpected operator"
MISSING_RIGHT_HAND_SIDE = "Missing right-hand side expression of infix operator"
EXPECTED_DATA_MANIPULATION = "Expected data manipulation"
EXPECTED_SIMPLE_PATH = "Expected identifier for simple path"
EXPECTED_TYPE_NAME = "Expected type name"
INVALID_PATH_DOT = "Invalid path dot component"
UNEXPECTED_PATH_COMPONENT = "Unexpected path component"

ALIASING = "Aliasing is not supported"
PATH_COMPONENT_EMPTY = "Path component cannot be an empty string"
FROM_TOO_MANY_COMPONENTS = "A path may contain at most 2 components in the FROM clause"
DML_ON_INDEX = "This operation is not supported on an index"
INSERT_ON_INDEX = "FROM clause may only contain a single table name"
INCOMPLETE_KEY = "Where clause does not contain a mandatory equality on all key attributes"
MULTIPLE_CONDITIONS_ON_KEY = (
    "Multiple conditions on same key {}. Only single item Update/Insert/Delete are supported"
)
KEY_TYPE_MISMATCH = "Key attribute's data type should match its data type in table's schema: Key {}"
KEY_ABSENT = "Key attribute should be present in the item: Key {}"
KEY_TYPE_INVALID = "Key value must be of type S, N, or B. Key name: {}, Key type: {}"
PARAMETER_COUNT = "Number of parameters in request and statement don't match."
STAR_AND_OTHERS = "Other attributes should not be present in the projection when '*' is used."
EMPTY_BAG = "Empty bags are not supported"
BAG_TYPES = "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"
DUPLICATE_TUPLE_KEY = "Duplicate keys in tuple. Key: {} under {}"
TUPLE_KEY_TYPE = "Tuple keys must be of type String. Actual type: {} under {}"
INSERT_NOT_A_TUPLE = (
    "Unsupported format in item expression. Please use struct format {...} to express item "
    "values for insert statement."
)
INSERT_MANY = (
    "Unsupported operation: Inserting multiple items in a single statement is not supported, "
    'use "INSERT INTO tableName VALUE item" instead'
)
RETURNING_IN_INSERT = "RETURNING is not supported in INSERT"
RETURNING_IN_DELETE = (
    "Invalid returning clause: RETURNING {}. Only RETURNING ALL OLD * is allowed in DELETE statements."
)
RETURNING_IN_TRANSACTION = "RETURNING clause is not supported in ExecuteTransaction."
EXISTS_OUTSIDE_TRANSACTION = "EXISTS can only be used in ExecuteTransaction write requests."
MISSING_NOT_WITH_IS = "MISSING must be compared using IS operator"
IS_IN_UPDATE = "IS operator is not supported in update expressions"
UNRECOGNIZED_FUNCTION = "Unrecognized function: {} at {}"
UNSUPPORTED_OPERATION = "Unsupported operation: {}"
CONSISTENT_READ_ON_GSI = "Strongly consistent read is not supported on Global Secondary Indexes"
ORDER_BY_WITHOUT_WHERE = "Must have WHERE clause in the statement when using ORDER BY clause."
ORDER_BY_WITHOUT_HASH_KEY = (
    "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
)
ORDER_BY_NOT_KEY = "Variable reference {} in ORDER BY clause must be part of the primary key"
OVERLAPPING_CONDITIONS = "Overlapping conditions with range keys are not supported in where clause"
TOO_MANY_READS = "Too many decomposed read operations for a given query."
INVALID_NEXT_TOKEN = "Invalid NextToken"
NEXT_TOKEN_MISMATCH = "NextToken does not match request"
TABLE_NAME_INVALID = (
    "Table name should be within the length [3, 255] and only contain "
    "'a-z', 'A-Z', '0-9', '-', '_', '.'."
)
DUPLICATE_ITEM = "Duplicate primary key exists in table"
MULTI_ATTRIBUTE_INDEX = (
    "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or "
    "multi-attribute RANGE keys."
)
MISSING_INDEX = "The table does not have the specified index"
"""(Query's text; ops.MISSING_INDEX, which dispatch's catalogue refresh looks for.)"""
TRANSACTION_MIXED = (
    "ExecuteTransaction API does not support both read and write operations in the same request."
)
BATCH_READ_NOT_BY_KEY = (
    "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
)
TRANSACTION_READ_NOT_BY_KEY = (
    "Select statements within ExecuteTransaction must specify the primary key in the where clause."
)
TRANSACTION_READ_ON_INDEX = "Reads on indices are not supported within transactions."
TRANSACTION_INDEX_OPERATION = "Operations on indices are not supported in transactions"
TRANSACTION_EXISTS_NOT_BY_KEY = "EXISTS() must contain a single item read with additional condition"
TRANSACTION_MEMBER_FAILED = "Validation failed in TransactStatements[{}]: {}"
BATCH_MIXED = "Batch statement contains both read and write statements"
"""(ours: docs/partiql.md lists it as unconfirmed)"""


def not_well_formed(detail: str) -> ValidationException:
    return ValidationException(NOT_WELL_FORMED + detail)

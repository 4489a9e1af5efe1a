"""PartiQL through the AWS SDK for JavaScript v3 (tests/js/partiql.mjs), and
DynamoDB Streams seeing PartiQL writes as the item API's."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.api.conftest import make_client
from tests.api.helpers import JS_DIR, node_with_js_sdk


def test_javascript_sdk_v3(endpoint: str, unique_name: Any) -> None:
    node = node_with_js_sdk()
    completed = subprocess.run(
        [node, str(JS_DIR / "partiql.mjs"), endpoint, unique_name("js-partiql")],
        capture_output=True, text=True, timeout=60, cwd=JS_DIR,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result == {
        "selected": [["Ada", ["a", "b"]]],
        "queried": [2, 1],
        "capacity": 0.5,
        "updated": [[1, ["a", "b", "c"]]],
        "duplicate": "DuplicateItemException: Duplicate primary key exists in table",
        "malformed": "ValidationException: Statement wasn't well formed, can't be processed: Unexpected term",
        "batch": ["Ada", "ValidationError"],
        "cancelled": ["TransactionCanceledException", ["None", "DuplicateItem"]],
        "after": ["1", "2"],
    }


def test_streams_see_partiql_writes(client: Any, endpoint: str, make_table: Any) -> None:
    table = make_table(sk=None, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    client.execute_statement(Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'k', 'v': 1}}")
    client.execute_statement(Statement=f"UPDATE \"{table}\" SET v = 2 WHERE pk = 'k'")
    client.execute_statement(Statement=f"DELETE FROM \"{table}\" WHERE pk = 'k'")
    arn = client.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    streams = make_client(endpoint, "dynamodbstreams")
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records += streams.get_records(ShardIterator=iterator)["Records"]
    assert [record["eventName"] for record in records] == ["INSERT", "MODIFY", "REMOVE"]
    assert records[1]["dynamodb"]["OldImage"]["v"] == {"N": "1"}
    assert records[1]["dynamodb"]["NewImage"]["v"] == {"N": "2"}

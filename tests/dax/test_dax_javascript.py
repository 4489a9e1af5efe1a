"""Amazon's JavaScript v3 DAX client (@amazon-dax-sdk/client-dax, from npm:
tests/js/package.json, installed by .ci/run) against the DAX endpoint:
every operation, the item cache, DynamoDB's errors as that client names them.
Skipped on a machine without node and tests/js/node_modules, failed in CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.dax.conftest import DaxServerProcess, create_table

JS_DIR = Path(__file__).resolve().parent.parent / "js"


def node_with_dax_client() -> str:
    node = shutil.which("node")
    if node is None or not (JS_DIR / "node_modules" / "@amazon-dax-sdk" / "client-dax").exists():
        message = "node and tests/js/node_modules are required: run `npm ci` in tests/js (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return node


def test_the_javascript_dax_client(dax_server: DaxServerProcess, ddb: Any) -> None:
    node = node_with_dax_client()
    name = create_table(ddb)
    completed = subprocess.run([node, str(JS_DIR / "dax.mjs"), dax_server.dax_url, name, dax_server.endpoint],
                               cwd=JS_DIR, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    results = json.loads(completed.stdout.strip().splitlines()[-1])
    assert results.get("unexpected") is None, results.get("unexpected")
    key = {"pk": {"S": "USER#1"}, "sk": {"N": "1"}}
    written = {**key, "name": {"S": "Ada"}, "tags": {"SS": ["a", "b"]}, "n": {"N": "1.5"}}
    assert results["got"]["Item"] == written
    assert results["projected"]["Item"] == {"name": {"S": "Ada"}}
    assert results["updated"]["Attributes"] == {**written, "visits": {"N": "1"}}
    assert results["cached"]["Item"] == {**written, "visits": {"N": "1"}}  # written through
    assert results["batch"]["Responses"][name] == [{"pk": key["pk"], "sk": {"N": "2"}}]
    assert [item["sk"]["N"] for item in results["queried"]["Items"]] == ["2", "3", "4"]
    assert results["scanned"]["Count"] == 2 and "LastEvaluatedKey" in results["scanned"]
    assert results["transactGet"]["Responses"][0]["Item"]["visits"] == {"N": "2"}
    assert results["deleted"]["Attributes"] == {"pk": key["pk"], "sk": {"N": "3"}}
    cancelled = results["cancelled"]
    assert cancelled["code"] == "TransactionCanceledException"
    assert [reason["Code"] for reason in cancelled["reasons"]] == ["None", "ConditionalCheckFailed"]
    assert cancelled["reasons"][1]["Item"] == {**written, "visits": {"N": "2"}}
    assert results["stale"]["Item"]["v"] == {"S": "old"}  # written around DAX: the cache still has the old one
    assert results["fresh"]["Item"]["v"] == {"S": "new"}
    assert results["conditionError"]["code"] == "ConditionalCheckFailedException"
    assert results["missingTableError"]["code"] == "ResourceNotFoundException"
    http = ddb.scan(TableName=name, ConsistentRead=True)["Items"]
    assert sorted(item["sk"]["N"] for item in http) == ["1", "2", "7"]

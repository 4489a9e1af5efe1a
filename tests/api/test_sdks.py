"""Clients other than boto3 work unchanged: the AWS CLI and the JavaScript SDK v3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.api.helpers import JS_DIR, node_with_js_sdk


def aws_cli(endpoint: str, *args: str) -> Any:
    environment = dict(
        os.environ,
        AWS_ACCESS_KEY_ID="AKIDTEST",
        AWS_SECRET_ACCESS_KEY="secret",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_MAX_ATTEMPTS="1",
    )
    completed = subprocess.run(
        [sys.executable, "-m", "awscli", "dynamodb", *args, "--endpoint-url", endpoint, "--output", "json"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    return completed


def test_aws_cli_round_trip(endpoint: str, unique_name: Any) -> None:
    table = unique_name("cli")
    created = aws_cli(
        endpoint, "create-table", "--table-name", table,
        "--attribute-definitions", "AttributeName=pk,AttributeType=S",
        "--key-schema", "AttributeName=pk,KeyType=HASH",
        "--billing-mode", "PAY_PER_REQUEST",
    )
    assert created.returncode == 0, created.stderr
    # As in DynamoDB, CreateTable answers CREATING; the table is ACTIVE at once after.
    assert json.loads(created.stdout)["TableDescription"]["TableStatus"] == "CREATING"
    described = aws_cli(endpoint, "describe-table", "--table-name", table)
    assert json.loads(described.stdout)["Table"]["TableStatus"] == "ACTIVE"
    put = aws_cli(endpoint, "put-item", "--table-name", table, "--item", '{"pk": {"S": "k"}, "n": {"N": "1.50"}}')
    assert put.returncode == 0, put.stderr
    got = aws_cli(endpoint, "get-item", "--table-name", table, "--key", '{"pk": {"S": "k"}}')
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["Item"] == {"pk": {"S": "k"}, "n": {"N": "1.5"}}
    failed = aws_cli(
        endpoint, "put-item", "--table-name", table, "--item", '{"pk": {"S": "k"}}',
        "--condition-expression", "attribute_not_exists(pk)",
    )
    assert failed.returncode != 0
    assert "ConditionalCheckFailedException" in failed.stderr
    assert aws_cli(endpoint, "delete-table", "--table-name", table).returncode == 0


def test_javascript_sdk_v3(endpoint: str, unique_name: Any) -> None:
    node = node_with_js_sdk()
    completed = subprocess.run(
        [node, str(JS_DIR / "smoke.mjs"), endpoint, unique_name("js")],
        capture_output=True, text=True, timeout=60, cwd=JS_DIR,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result == {
        "status": "ACTIVE",
        "visits": 1,
        "name": "Ada",
        "tags": ["a", "b"],
        "orders": [12.5],
        "conditionError": "ConditionalCheckFailedException",
    }

"""The console's pure JavaScript modules (lossless JSON and types, expressions, code
generation, CSV/JSON import and export, the SigV4 signer), unit-tested with node when
it is installed. The signer's expected signatures come from botocore's SigV4Auth, the
reference signer, for the same requests."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dynastore.console.app import STATIC_ROOT

NODE = shutil.which("node")
SIGNED_AT = datetime.datetime(2026, 12, 2, 16, 30, 5)

SIGNING_CASES: list[dict[str, Any]] = [
    {"method": "POST", "path": "/", "target": "DynamoDB_20120810.ListTables", "body": "{}",
     "key": ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None), "region": "us-east-1"},
    {"method": "POST", "path": "/", "target": "DynamoDB_20120810.PutItem",
     "body": json.dumps({"TableName": "t", "Item": {"s": {"S": "é€😀 " * 300}}}, ensure_ascii=False),
     "key": ("ASIATEMPORARY", "secret/with+signs=", "FwoGZXIvYXdzEB0aDH+token/=="), "region": "eu-west-1"},
    {"method": "GET", "path": "/_dynastore/identity", "body": "",
     "key": ("AKIDADMIN", "s" * 70, None), "region": "ap-southeast-2"},  # a key longer than a SHA-256 block
    {"method": "POST", "path": "/_dynastore/throughput", "body": '{"Mode": "observe"}',
     "key": ("AKIDADMIN", "x", None), "region": "us-gov-west-1"},
]


def botocore_vector(case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What botocore signs for the request the page sends (host 127.0.0.1:8000)."""
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: SIGNED_AT)
    headers = {"Content-Type": "application/x-amz-json-1.0" if case.get("target") else "application/json"}
    if case.get("target"):
        headers["X-Amz-Target"] = case["target"]
    request = AWSRequest(
        method=case["method"], url=f"http://127.0.0.1:8000{case['path']}",
        data=case["body"].encode(), headers=headers,
    )
    access_key_id, secret, token = case["key"]
    botocore.auth.SigV4Auth(Credentials(access_key_id, secret, token), "dynamodb", case["region"]).add_auth(request)
    signed = {name.lower(): value for name, value in request.headers.items()}
    return {
        "method": case["method"], "path": case["path"], "body": case["body"], "region": case["region"],
        "headers": {"host": "127.0.0.1:8000", **{k: v for k, v in signed.items()
                                                 if k in ("content-type", "x-amz-target")}},
        "credentials": {"accessKeyId": access_key_id, "secretAccessKey": secret,
                        **({"sessionToken": token} if token else {})},
        "now": SIGNED_AT.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expected": {k: signed[k] for k in ("authorization", "x-amz-date", "x-amz-security-token") if k in signed},
    }


@pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")
def test_console_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = tmp_path / "sigv4-vectors.json"
    vectors.write_text(json.dumps([botocore_vector(case, monkeypatch) for case in SIGNING_CASES]))
    script = Path(__file__).with_name("units.mjs")
    assert NODE is not None
    result = subprocess.run(
        [NODE, str(script), str(STATIC_ROOT), str(vectors)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")
    assert "signatures 8" in result.stdout  # every vector, with crypto.subtle and without

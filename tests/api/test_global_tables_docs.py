"""docs/global-tables.md's examples run as written (against a fresh server):
the replica filled from the existing items, then the lost update made
visible step by step."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.api.conftest import start_server, stop_server

PAGE = Path(__file__).resolve().parents[2] / "docs" / "global-tables.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)


def test_the_pages_examples_run_and_show_the_lost_update() -> None:
    process, url = start_server("--in-memory")
    try:
        blocks = [block.replace("http://127.0.0.1:8000", url) for block in python_blocks()]
        namespace: dict[str, Any] = {}
        exec(blocks[0], namespace)  # noqa: S102 - the page's own example
        assert namespace["west"].get_item(TableName="accounts", Key={"pk": {"S": "alice"}})["Item"]["balance"] == {"N": "100"}
        exec(blocks[1], namespace)  # noqa: S102
        for client in (namespace["east"], namespace["west"]):
            item = client.get_item(TableName="accounts", Key={"pk": {"S": "alice"}}, ConsistentRead=True)["Item"]
            assert item["balance"] == {"N": "50"}  # us-east-1's withdrawal of 30 is gone
        replicas = {entry["Region"]: entry for entry in namespace["admin"]("/_dynastore/replication")["Replicas"]}
        assert replicas["us-east-1"]["Overwrites"] == 1 and replicas["us-west-2"]["Discarded"] == 1
    finally:
        stop_server(process)

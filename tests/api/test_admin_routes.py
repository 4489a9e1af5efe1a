"""dynastore's own admin routes under /_dynastore/ (docs/admin.md), over HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def admin(endpoint: str, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes, str]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(endpoint + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers.get("Content-Type", "")


def test_metrics_route_reports_consumed_capacity(endpoint: str, client: Any, make_table: Any) -> None:
    assert admin(endpoint, "GET", "/_dynastore/metrics")[:1] == (200,)
    status, body, _ = admin(endpoint, "POST", "/_dynastore/throughput", {"Mode": "observe"})
    assert status == 200, body
    try:
        table = make_table()
        client.put_item(TableName=table, Item={"pk": {"S": "a"}, "sk": {"S": "b"}})
        status, body, _ = admin(endpoint, "GET", "/_dynastore/metrics")
        assert status == 200
        metrics = json.loads(body)
        assert metrics["Mode"] == "observe"
        assert metrics["Tables"][table]["WriteUnits"] == 1.0
        status, text, content_type = admin(endpoint, "GET", "/_dynastore/metrics?format=prometheus")
        assert status == 200
        assert content_type.startswith("text/plain")
        assert f'table="{table}"' in text.decode()
    finally:
        admin(endpoint, "POST", "/_dynastore/throughput", {"Mode": "off"})
    assert json.loads(admin(endpoint, "GET", "/_dynastore/metrics")[1])["Mode"] == "off"


def test_unknown_admin_route_is_404(endpoint: str) -> None:
    status, body, _ = admin(endpoint, "GET", "/_dynastore/nothing-here")
    assert status == 404
    assert json.loads(body) == {"message": "Not Found"}


def test_faults_route_lists_rules(endpoint: str) -> None:
    status, body, _ = admin(endpoint, "GET", "/_dynastore/faults")
    assert status == 200
    assert "Rules" in json.loads(body)

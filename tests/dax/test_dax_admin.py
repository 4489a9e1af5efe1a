"""The DAX endpoint's figures (/_dynastore/dax, /_dynastore/metrics and its
Prometheus form) and the admin route that flushes its caches."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.dax.conftest import DaxServerProcess, create_table, dax_client, free_port, unique


@pytest.fixture
def own_server() -> Iterator[Any]:
    """A server of this test's own, so its counters start at zero."""
    server = DaxServerProcess()
    client = dax_client(server.dax_url)
    yield server, client
    client.close()
    server.stop()


def test_hits_misses_sizes_and_the_flush(own_server: Any) -> None:
    server, dax = own_server
    ddb = boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                       aws_access_key_id="any", aws_secret_access_key="any")
    name = create_table(ddb, sort_type=None)
    key = {"pk": {"S": unique()}}
    assert "Item" not in dax.get_item(TableName=name, Key=key)  # miss (then cached: absent)
    assert "Item" not in dax.get_item(TableName=name, Key=key)  # hit
    dax.put_item(TableName=name, Item={**key, "v": {"S": "x" * 1000}})  # written through
    assert dax.get_item(TableName=name, Key=key)["Item"]["v"]["S"] == "x" * 1000  # hit
    dax.scan(TableName=name)
    dax.scan(TableName=name)
    figures = server.admin("/_dynastore/dax")
    assert figures["Url"] == server.dax_url
    item, query = figures["itemCache"], figures["queryCache"]
    assert (item["hits"], item["misses"], item["entries"]) == (2, 1, 1)
    assert item["sizeBytes"] > 1000 and item["ttlMs"] == 300000
    assert (query["hits"], query["misses"], query["entries"]) == (1, 1, 1)
    assert figures["requests"]["get_item"] == 3
    assert server.admin("/_dynastore/metrics")["Dax"]["itemCache"]["hits"] == 2
    prometheus = server.admin("/_dynastore/metrics?format=prometheus").decode()
    assert 'dynastore_dax_cache_hits_total{cache="item"} 2' in prometheus
    assert 'dynastore_dax_cache_entries{cache="query"} 1' in prometheus
    assert "dynastore_dax_connections 1" in prometheus
    assert server.admin("/_dynastore/dax/flush", {"Cache": "query"}) == {"Flushed": {"query": 1}}
    assert server.admin("/_dynastore/dax/flush", {}) == {"Flushed": {"item": 1, "query": 0}}
    ddb.put_item(TableName=name, Item={**key, "v": {"S": "around"}})
    assert dax.get_item(TableName=name, Key=key)["Item"]["v"] == {"S": "around"}  # flushed: fetched again
    after = server.admin("/_dynastore/dax")["itemCache"]
    assert after["entries"] == 1 and after["misses"] == 2


def test_the_lru_bound_evicts_the_least_recently_used() -> None:
    server = DaxServerProcess(environment={"DYNASTORE_DAX_CACHE_MAX_BYTES": "4000"})
    dax = dax_client(server.dax_url)
    try:
        ddb = boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                           aws_access_key_id="any", aws_secret_access_key="any")
        name = create_table(ddb, sort_type=None)
        for number in range(6):
            dax.put_item(TableName=name, Item={"pk": {"S": f"k{number}"}, "v": {"S": "x" * 900}})
        figures = server.admin("/_dynastore/dax")["itemCache"]
        assert figures["sizeBytes"] <= 4000 and figures["evictions"] >= 2
        ddb.put_item(TableName=name, Item={"pk": {"S": "k0"}, "v": {"S": "new"}})
        ddb.put_item(TableName=name, Item={"pk": {"S": "k5"}, "v": {"S": "new"}})
        assert dax.get_item(TableName=name, Key={"pk": {"S": "k0"}})["Item"]["v"] == {"S": "new"}  # evicted
        assert dax.get_item(TableName=name, Key={"pk": {"S": "k5"}})["Item"]["v"]["S"] == "x" * 900  # kept
    finally:
        dax.close()
        server.stop()


def test_without_dax_the_route_says_how_to_start_it() -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_dynastore/dax", timeout=10)
        assert caught.value.code == 404
        assert b"--dax-port" in caught.value.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_dynastore/metrics", timeout=10) as answer:
            assert b"Dax" not in answer.read()
    finally:
        process.terminate()
        process.wait(timeout=10)

"""The throughput model's cost (issue 7): CPU time per operation with the
model off, observing, and enforcing, in-process through ``ops.dispatch`` --
the worst case for the model's share, since no HTTP or boto3 time dilutes it.

    python bench/throughput.py [--requests 4000] [--rounds 5]
    python bench/throughput.py --http [--duration 4] [--rounds 3]

Workloads (1 KB items, 1,000 partition keys in rotation): GetItem, PutItem,
Query (10 items), and PutItem / UpdateItem on a table with a GSI (the model
then also finds the item's GSI key: from the request for PutItem, from the
stored item for UpdateItem). The provisioned throughput is far above what one
process can consume, so nothing throttles: what is measured is accounting,
admission, partitions and the windowed top keys. Prints microseconds per call
(best of ``--rounds``: the machines are shared and noisy) and the ratio to off.

``--http``: the same question over HTTP with bench/loadgen.py, which is what
a client sees: one in-memory server started plainly and one with
``--throughput observe`` (counting everything, throttling nothing: loadgen's
on-demand table would otherwise be held to DynamoDB's warm throughput), the
get/put/query workloads at 32 connections, alternating the two servers run by
run; ops/s and ops per server CPU-second (median of ``--rounds``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import dynastore
from dynastore.ops import dispatch
from dynastore.throughput import ENFORCE, OBSERVE, OFF, disable, enable

KEYS = 1000
DATA = "x" * 900
THROUGHPUT = {"ReadCapacityUnits": 40_000, "WriteCapacityUnits": 40_000}


def create_tables(client: Any) -> None:
    definitions = [{"AttributeName": name, "AttributeType": "S"} for name in ("pk", "sk", "g")]
    key_schema = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    client.create_table(TableName="plain", KeySchema=key_schema, AttributeDefinitions=definitions[:2],
                        ProvisionedThroughput=THROUGHPUT)
    client.create_table(TableName="indexed", KeySchema=key_schema, AttributeDefinitions=definitions,
                        ProvisionedThroughput=THROUGHPUT,
                        GlobalSecondaryIndexes=[{"IndexName": "by-g",
                                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                                 "Projection": {"ProjectionType": "KEYS_ONLY"},
                                                 "ProvisionedThroughput": THROUGHPUT}])


def item(table: str, number: int, sk: str = "s0") -> dict[str, Any]:
    body = {"pk": {"S": f"user#{number % KEYS}"}, "sk": {"S": sk}, "data": {"S": DATA}}
    if table == "indexed":
        body["g"] = {"S": f"group#{number % 100}"}
    return body


def preload(database: Any) -> None:
    for number in range(KEYS):
        for sk in range(10):
            dispatch(database, "PutItem", {"TableName": "plain", "Item": item("plain", number, f"s{sk}")})
        dispatch(database, "PutItem", {"TableName": "indexed", "Item": item("indexed", number)})


def workloads(database: Any) -> dict[str, Callable[[int], Any]]:
    def get(n: int) -> Any:
        return dispatch(database, "GetItem", {"TableName": "plain", "Key": {"pk": {"S": f"user#{n % KEYS}"},
                                                                          "sk": {"S": "s0"}}})

    def put(n: int) -> Any:
        return dispatch(database, "PutItem", {"TableName": "plain", "Item": item("plain", n)})

    def query(n: int) -> Any:
        return dispatch(database, "Query", {"TableName": "plain", "KeyConditionExpression": "pk = :p",
                                            "ExpressionAttributeValues": {":p": {"S": f"user#{n % KEYS}"}}})

    def put_gsi(n: int) -> Any:
        return dispatch(database, "PutItem", {"TableName": "indexed", "Item": item("indexed", n)})

    def update_gsi(n: int) -> Any:
        return dispatch(database, "UpdateItem", {
            "TableName": "indexed", "Key": {"pk": {"S": f"user#{n % KEYS}"}, "sk": {"S": "s0"}},
            "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": str(n)}}})

    return {"GetItem": get, "PutItem": put, "Query (10 items)": query,
            "PutItem, table with GSI": put_gsi, "UpdateItem, table with GSI": update_gsi}


def per_call_us(call: Callable[[int], Any], requests: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for n in range(requests):
            call(n)
        best = min(best, (time.process_time() - started) / requests * 1e6)
    return best


def http_main(duration: float, rounds: int, items: int) -> None:
    """Over HTTP: a plain server against one with the model observing."""
    import run  # bench/run.py: servers and loadgen, as the main benchmark runs them

    class ModelServer(run.Server):
        def command(self) -> list[str]:
            extra = ["--throughput", "observe"] if self.kind == "observe" else []
            return [*super().command(), *extra]

        @property
        def label(self) -> str:
            return "model observing" if self.kind == "observe" else "model off"

    servers = [ModelServer("memory"), ModelServer("observe")]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for server in servers:
            server.start()
            run.loadgen(server, "--setup-only", "--items", str(items))
        for turn, workload in enumerate(("get", "put", "query") * rounds):
            for server in servers[turn % 2:] + servers[:turn % 2]:
                result = run.loadgen(server, "--no-setup", "--workload", workload, "-c", "32", "-d", str(duration),
                                     "--warmup", "1", "--items", str(items))
                results.setdefault((workload, server.kind), []).append(result)
    finally:
        for server in servers:
            server.stop()
    print("| workload (32 conns) | off ops/s | off ops/CPU-s | observe ops/s | observe ops/CPU-s | observe / off (ops/CPU-s) |")
    print("|---|---|---|---|---|---|")
    for workload in ("get", "put", "query"):
        cells = []
        for kind in ("memory", "observe"):
            runs = results[(workload, kind)]
            cells.append(statistics.median(float(one["ops_s"]) for one in runs))
            cells.append(statistics.median(run.cpu_efficiency(one) or 0.0 for one in runs))
        print(f"| {workload} | {cells[0]:,.0f} | {cells[1]:,.0f} | {cells[2]:,.0f} | {cells[3]:,.0f} | "
              f"{cells[3] / cells[1]:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--http", action="store_true", help="over HTTP with loadgen (see above)")
    parser.add_argument("--duration", type=float, default=4.0, help="--http: seconds per run")
    parser.add_argument("--items", type=int, default=20_000, help="--http: items preloaded")
    arguments = parser.parse_args()
    if arguments.http:
        http_main(arguments.duration, arguments.rounds, arguments.items)
        return
    embedded = dynastore.open()
    database = embedded.database
    create_tables(embedded.client())
    preload(database)
    results: dict[str, dict[str, float]] = {}
    for mode in (OFF, OBSERVE, ENFORCE):
        if mode == OFF:
            disable(database)
        else:
            enable(database, mode)
        for name, call in workloads(database).items():
            results.setdefault(name, {})[mode] = per_call_us(call, arguments.requests, arguments.rounds)
    print("| operation | off us | observe us | enforce us | enforce / off |")
    print("|---|---|---|---|---|")
    for name, by_mode in results.items():
        ratio = by_mode[ENFORCE] / by_mode[OFF]
        print(f"| {name} | {by_mode[OFF]:.1f} | {by_mode[OBSERVE]:.1f} | {by_mode[ENFORCE]:.1f} | {ratio:.2f} |")
    embedded.close()


if __name__ == "__main__":
    main()

"""The pure throughput rules (dynastore/engine/throughput.py) and the
ConsumedCapacity conversions of dynastore/throughput.py."""

from __future__ import annotations

import orjson

from dynastore.engine import throughput as rules
from dynastore.throughput import as_asked, split_capacity


def test_bucket_starts_with_one_second_and_saves_at_most_300() -> None:
    bucket = rules.TokenBucket(10, rules.BURST_SECONDS, now=0.0)
    assert bucket.tokens == 10
    bucket.refill(10_000.0)
    assert bucket.tokens == 3000


def test_bucket_admits_while_positive_and_may_go_into_debt() -> None:
    bucket = rules.TokenBucket(1, rules.BURST_SECONDS, now=0.0)
    assert bucket.admits(0.0)
    bucket.take(4, 0.0)  # a 4 KB write charged after the fact
    assert not bucket.admits(0.0)
    assert not bucket.admits(3.0)  # -3 + 3 = 0: still nothing left
    assert bucket.admits(3.5)


def test_bucket_pending_units_reserve_capacity() -> None:
    bucket = rules.TokenBucket(2, 1, now=0.0)
    assert bucket.admits(0.0, pending=1)
    assert not bucket.admits(0.0, pending=2)


def test_resize_keeps_saved_capacity_within_the_new_bound() -> None:
    bucket = rules.TokenBucket(10, rules.BURST_SECONDS, now=0.0)
    bucket.refill(300.0)
    bucket.resize(1, rules.BURST_SECONDS, 300.0)
    assert bucket.tokens == 300


def test_partition_count_by_throughput_and_size() -> None:
    assert rules.partitions_for_throughput(1, 1) == 1
    assert rules.partitions_for_throughput(3000, 1000) == 2
    assert rules.partitions_for_throughput(30, 9990) == 10
    assert rules.partitions_for_throughput(12_000, 4_000) == 8
    assert rules.partitions_for_size(25 * (1 << 30)) == 3
    assert rules.partition_count(1, 1, 0, previous=4) == 4  # never merges


def test_partition_of_splits_the_hash_space_evenly() -> None:
    assert rules.partition_of(0, 4) == 0
    assert rules.partition_of((1 << 32) - 1, 4) == 3
    assert rules.partition_of(1 << 31, 4) == 2


def test_on_demand_limits_double_the_peak_within_the_maximum() -> None:
    limits = rules.on_demand_limits(12_000, 4_000, 0, 0, None, None)
    assert (limits.read_rate, limits.write_rate) == (12_000, 4_000)
    assert limits.limit_type == rules.ACCOUNT_LIMIT_EXCEEDED
    grown = rules.on_demand_limits(12_000, 4_000, 0, 5_000, None, None)
    assert grown.write_rate == 10_000
    capped = rules.on_demand_limits(12_000, 4_000, 0, 5_000, None, 50)
    assert capped.write_rate == 50 and capped.limit_type == rules.MAX_ON_DEMAND_EXCEEDED


def test_rate_window_tracks_last_second_and_peak() -> None:
    window = rules.RateWindow()
    window.add(5, 10.2)
    window.add(5, 10.9)
    window.add(1, 11.0)
    assert window.last == 10 and window.per_second(11.5) == 10
    window.roll(20.0)
    assert window.peak == 10 and window.last == 0


def test_throttling_reason_format() -> None:
    assert rules.throttling_reason("Index", "Read", rules.PROVISIONED_EXCEEDED) == (
        "IndexReadProvisionedThroughputExceeded"
    )


INDEXES = {
    "TableName": "t",
    "CapacityUnits": 3.0,
    "WriteCapacityUnits": 1.0,
    "Table": {"CapacityUnits": 1.0, "WriteCapacityUnits": 1.0},
    "GlobalSecondaryIndexes": {"g": {"CapacityUnits": 2.0}},
}


def test_total_mode_drops_the_breakdown() -> None:
    assert as_asked(INDEXES, "TOTAL") == {"TableName": "t", "CapacityUnits": 3.0, "WriteCapacityUnits": 1.0}
    assert as_asked(INDEXES, "INDEXES") is INDEXES


def test_split_capacity_cuts_the_tail_of_byte_responses() -> None:
    capacity = orjson.dumps(INDEXES)
    body = b'{"Item":{"pk":{"S":"ConsumedCapacity"}},"ConsumedCapacity":' + capacity + b"}"
    stripped, found = split_capacity(body, None)
    assert stripped == b'{"Item":{"pk":{"S":"ConsumedCapacity"}}}'
    assert found == [INDEXES]
    total, _ = split_capacity(body, "TOTAL")
    assert orjson.loads(total)["ConsumedCapacity"] == as_asked(INDEXES, "TOTAL")
    alone, _ = split_capacity(b'{"ConsumedCapacity":' + capacity + b"}", "NONE")
    assert alone == b"{}"


def test_serve_takes_the_throughput_flag() -> None:
    from dynastore.cli import build_parser

    assert build_parser().parse_args(["serve"]).throughput == "off"
    assert build_parser().parse_args(["serve", "--throughput", "enforce"]).throughput == "enforce"

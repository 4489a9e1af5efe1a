"""The windowed top-k counters behind the Contributor Insights figures
(dynastore/engine/top_keys.py), on an explicit clock: nothing sleeps."""

from __future__ import annotations

from dynastore.engine import top_keys
from dynastore.engine.top_keys import KeyInsights, SpaceSaving, WindowedTopKeys

T0 = 1_800_000_000.0 - (1_800_000_000.0 % 60)  # the start of a minute


def test_space_saving_is_exact_under_its_bound() -> None:
    counter = SpaceSaving(3)
    for key, amount in (("a", 1.0), ("b", 2.0), ("a", 4.0), ("c", 1.0)):
        counter.add(key, key.upper(), amount)
    assert counter.counts == {"a": 5.0, "b": 2.0, "c": 1.0}
    assert counter.labels == {"a": "A", "b": "B", "c": "C"}


def test_space_saving_drops_the_colder_half_and_keeps_the_heavy_hitter() -> None:
    counter = SpaceSaving(4)
    counter.add("hot", "hot", 100.0)
    for i in range(150):  # a long tail of one-off keys does not push the hot key out
        counter.add(f"cold{i}", "cold", 1.0)
    assert len(counter.counts) <= 4
    assert counter.counts["hot"] == 100.0
    assert counter.labels.keys() == counter.counts.keys()


def test_space_saving_newcomers_start_from_the_largest_count_dropped() -> None:
    counter = SpaceSaving(4)
    for key, amount in (("a", 9.0), ("b", 7.0), ("c", 5.0), ("d", 3.0)):
        counter.add(key, key, amount)
    counter.add("e", "e", 1.0)  # full: c and d are dropped, e starts above c's 5
    assert counter.counts == {"a": 9.0, "b": 7.0, "e": 6.0}
    assert counter.floor == 5.0


def test_windows_sum_minute_buckets_and_order_largest_first() -> None:
    rule = WindowedTopKeys(minutes=60, per_minute=10)
    rule.add(b"a", {"pk": "a"}, 3.0, T0)
    rule.add(b"b", {"pk": "b"}, 5.0, T0 + 10)
    rule.add(b"a", {"pk": "a"}, 4.0, T0 + 60)  # the next minute
    assert rule.top(1, T0 + 61, 10) == [({"pk": "a"}, 4.0)]
    assert rule.top(5, T0 + 61, 10) == [({"pk": "a"}, 7.0), ({"pk": "b"}, 5.0)]
    assert rule.top(5, T0 + 61, 1) == [({"pk": "a"}, 7.0)]


def test_ties_are_ordered_by_key() -> None:
    rule = WindowedTopKeys(minutes=5, per_minute=10)
    for key in (b"c", b"a", b"b"):
        rule.add(key, key.decode(), 1.0, T0)
    assert [label for label, _ in rule.top(1, T0, 3)] == ["a", "b", "c"]


def test_old_minutes_leave_the_window_then_the_memory() -> None:
    rule = WindowedTopKeys(minutes=5, per_minute=10)
    rule.add(b"old", "old", 9.0, T0)
    assert rule.top(5, T0 + 4 * 60, 10) == [("old", 9.0)]
    assert rule.top(5, T0 + 5 * 60, 10) == []  # out of the window, still held
    rule.add(b"new", "new", 1.0, T0 + 5 * 60)  # the next add drops the expired bucket
    assert [minute for minute, _ in rule.buckets] == [int(T0 // 60) + 5]
    assert rule.top(60, T0 + 5 * 60, 10) == [("new", 1.0)]


def test_memory_is_bounded_by_minutes_times_keys() -> None:
    rule = WindowedTopKeys(minutes=5, per_minute=8)
    for second in range(0, 20 * 60, 3):  # 20 minutes of ever-new keys
        rule.add(second, second, 1.0, T0 + second)
    assert len(rule.buckets) == 5
    assert rule.size() <= 5 * 8


def test_a_clock_set_back_counts_in_the_newest_bucket() -> None:
    rule = WindowedTopKeys(minutes=5, per_minute=8)
    rule.add(b"a", "a", 1.0, T0 + 120)
    rule.add(b"a", "a", 1.0, T0)
    assert len(rule.buckets) == 1 and rule.top(1, T0 + 120, 1) == [("a", 2.0)]


def test_key_insights_has_sort_key_rules_only_with_a_sort_key() -> None:
    assert sorted(KeyInsights(False).rules) == ["PKC", "PKT"]
    assert sorted(KeyInsights(True).rules) == ["PKC", "PKT", "SKC", "SKT"]


def test_key_insights_counts_units_and_throttle_events_apart() -> None:
    insights = KeyInsights(True)
    partition = (b"p", {"pk": {"S": "p"}})
    item = ((b"p", b"1"), {"pk": {"S": "p"}, "sk": {"S": "1"}})
    insights.record(False, partition, item, 2.5, T0)
    insights.record(False, partition, None, 1.0, T0)  # e.g. a Query: partition only
    insights.record(True, partition, item, 1.0, T0)
    report = insights.report(T0, 10)
    assert report["PKC"][1] == [({"pk": {"S": "p"}}, 3.5)]
    assert report["SKC"][1] == [({"pk": {"S": "p"}, "sk": {"S": "1"}}, 2.5)]
    assert report["PKT"][60] == [({"pk": {"S": "p"}}, 1.0)]
    assert report["SKT"][5] == [({"pk": {"S": "p"}, "sk": {"S": "1"}}, 1.0)]
    assert set(report["PKC"]) == set(top_keys.REPORT_WINDOWS)

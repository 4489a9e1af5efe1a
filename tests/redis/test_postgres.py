"""The Redis black-box tests again, over PostgreSQL (``serve --postgres URL
--redis-port P``): the same functions, collected here with ``served``
overridden by a server over a fresh throwaway database (so ``r`` and
every other fixture built on it use that server). Replies are still
compared byte for byte with Debian's redis-server (test_compare)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.redis.conftest import Served, start_dynastore
from tests.redis.test_blocking import (  # noqa: F401  (collected here, over PostgreSQL)
    test_a_deleted_or_retyped_key_keeps_the_client_blocked,
    test_a_push_wakes_the_oldest_waiter_first,
    test_blmove_and_bzpopmin_wake_on_a_push,
    test_blocking_pop_inside_multi_answers_at_once,
    test_blpop_times_out_with_a_null_array,
    test_the_pusher_inside_exec_wakes_the_waiter_after_the_whole_transaction,
)
from tests.redis.test_compare import test_replies_match_redis  # noqa: F401
from tests.redis.test_connection import (  # noqa: F401
    test_a_malformed_frame_closes_only_that_connection,
    test_asyncio_client,
    test_pipelining_many_commands_in_one_write,
    test_quit_closes_after_the_reply,
    test_resp3,
    test_select_keeps_databases_apart,
    test_strings_with_redis_py,
)
from tests.redis.test_guide import (  # noqa: F401
    test_a_reliable_queue_with_lmove,
    test_fixed_window_rate_limiter,
    test_session_hash_with_a_sliding_ttl,
    test_sharded_counter,
    test_weekly_leaderboard,
)
from tests.redis.test_streams import (  # noqa: F401
    test_a_work_queue_with_a_consumer_group,
    test_xread_block_times_out,
    test_xread_block_wakes_on_xadd_and_dollar_means_the_last_id,
    test_xreadgroup_block_wakes_on_xadd,
)
from tests.redis.test_transactions import (  # noqa: F401
    test_concurrent_watch_increments_lose_nothing,
    test_exec_reports_each_commands_error,
    test_publish_reaches_channel_and_pattern_subscribers,
    test_pubsub_over_resp3,
    test_watch_aborts_exec_when_another_client_changed_the_key,
)


@pytest.fixture(scope="module")
def served(postgres_server: Any) -> Iterator[Served]:
    server = start_dynastore("--postgres", postgres_server.new_database())
    yield server
    server.stop()


def test_the_server_over_postgres_serves_the_keyspace(served: Served) -> None:
    assert "redis: serving the keyspace" in served.output()
    client = served.client()
    try:
        assert client.ping() is True
    finally:
        client.close()

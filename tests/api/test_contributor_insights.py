"""Contributor Insights settings (issue 7): Update, Describe, List."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.api.helpers import error_of


def test_table_starts_disabled(client: Any, make_table: Any) -> None:
    table = make_table()
    answer = client.describe_contributor_insights(TableName=table)
    assert answer["TableName"] == table
    assert answer["ContributorInsightsStatus"] == "DISABLED"
    assert "ContributorInsightsRuleList" not in answer


def test_enable_then_describe_lists_the_rules(client: Any, make_table: Any) -> None:
    table = make_table()
    updated = client.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE")
    assert updated["ContributorInsightsStatus"] == "ENABLING"
    assert updated["ContributorInsightsMode"] == "ACCESSED_AND_THROTTLED_KEYS"
    described = client.describe_contributor_insights(TableName=table)
    assert described["ContributorInsightsStatus"] == "ENABLED"
    kinds = [name.split("-")[1] for name in described["ContributorInsightsRuleList"]]
    assert kinds == ["PKC", "PKT", "SKC", "SKT"]  # the table has a sort key
    assert all(f"-{table}-" in name for name in described["ContributorInsightsRuleList"])


def test_throttled_keys_mode_and_hash_only_table(client: Any, make_table: Any) -> None:
    table = make_table(sk=None)
    client.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE",
                                       ContributorInsightsMode="THROTTLED_KEYS")
    described = client.describe_contributor_insights(TableName=table)
    assert [name.split("-")[1] for name in described["ContributorInsightsRuleList"]] == ["PKT"]
    assert described["ContributorInsightsMode"] == "THROTTLED_KEYS"


def test_disable_and_list(client: Any, make_table: Any) -> None:
    table = make_table()
    client.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE")
    listed = client.list_contributor_insights(TableName=table)["ContributorInsightsSummaries"]
    assert listed == [{"TableName": table, "ContributorInsightsStatus": "ENABLED",
                       "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS"}]
    assert client.update_contributor_insights(
        TableName=table, ContributorInsightsAction="DISABLE")["ContributorInsightsStatus"] == "DISABLING"
    assert client.describe_contributor_insights(TableName=table)["ContributorInsightsStatus"] == "DISABLED"


def test_index_settings_are_separate(client: Any, make_table: Any) -> None:
    table = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
    )
    client.update_contributor_insights(TableName=table, IndexName="by-g", ContributorInsightsAction="ENABLE")
    assert client.describe_contributor_insights(TableName=table)["ContributorInsightsStatus"] == "DISABLED"
    index = client.describe_contributor_insights(TableName=table, IndexName="by-g")
    assert index["IndexName"] == "by-g"
    assert [name.split("-")[1] for name in index["ContributorInsightsRuleList"]] == ["PKC", "PKT"]


def test_unknown_table_and_index(client: Any, make_table: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.describe_contributor_insights(TableName="no-such-table")
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    table = make_table()
    with pytest.raises(ClientError) as excinfo:
        client.update_contributor_insights(TableName=table, IndexName="nope", ContributorInsightsAction="ENABLE")
    assert error_of(excinfo) == ("ResourceNotFoundException", f"Requested resource not found: Index: nope not found for table: {table}")


def test_action_must_be_enable_or_disable(client: Any, make_table: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        client.update_contributor_insights(TableName=make_table(), ContributorInsightsAction="MAYBE")
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "contributorInsightsAction" in message

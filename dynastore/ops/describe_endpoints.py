"""DescribeEndpoints: the regional endpoint address, as DynamoDB answers it.

SDKs with endpoint discovery call this; they keep using the endpoint they were
configured with when it names the public address. The address names the
region the request was signed for (``dynamodb.REGION.amazonaws.com``), also
under ``--single-region``, where every region's tables are us-east-1's
(ops.dispatch passes that region on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dynastore import limits

if TYPE_CHECKING:
    from dynastore.database import Database


def handle(database: Database, request: dict[str, Any], region: str | None = None) -> dict[str, Any]:
    return {
        "Endpoints": [
            {
                "Address": f"dynamodb.{region or database.region}.amazonaws.com",
                "CachePeriodInMinutes": limits.ENDPOINT_CACHE_PERIOD_MINUTES,
            }
        ]
    }

"""DescribeEndpoints: the regional endpoint address, as DynamoDB answers it.

SDKs with endpoint discovery call this; they keep using the endpoint they were
configured with when it names the public address.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynastore.database import Database

ENDPOINT_CACHE_PERIOD_MINUTES = 1440


def handle(database: Database, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "Endpoints": [
            {
                "Address": f"dynamodb.{database.region}.amazonaws.com",
                "CachePeriodInMinutes": ENDPOINT_CACHE_PERIOD_MINUTES,
            }
        ]
    }

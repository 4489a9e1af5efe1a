"""The regions a global table may have replicas in (the commercial AWS
regions that offer global tables version 2019.11.21), and DynamoDB's refusal
of any other name."""

from __future__ import annotations

from dynastore.errors import ValidationException

SUPPORTED_REGIONS: tuple[str, ...] = (
    "ap-south-2", "ap-south-1", "eu-south-1", "eu-south-2", "me-central-1", "il-central-1",
    "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "us-west-1", "us-west-2",
    "af-south-1", "eu-north-1", "eu-west-3", "eu-west-2", "eu-west-1", "ap-northeast-3",
    "ap-northeast-2", "ap-northeast-1", "me-south-1", "sa-east-1", "ap-east-1", "ap-southeast-1",
    "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-7",
    "mx-central-1", "us-east-1", "us-east-2",
)
"""In the order DynamoDB's message lists them (its start, as measured live:
ack-api-quirks DDB-TABLE-223; the rest of the order is dynastore's)."""


def check_region(region: object) -> str:
    """``region`` if global tables may use it, else DynamoDB's ValidationException
    (a name in capitals is refused too: region names are lower case)."""
    if not isinstance(region, str) or region not in SUPPORTED_REGIONS:
        raise ValidationException(
            f"Region {region} is not supported. The latest version of global tables are only "
            f"supported in the following regions: [{', '.join(SUPPORTED_REGIONS)}]."
        )
    return region

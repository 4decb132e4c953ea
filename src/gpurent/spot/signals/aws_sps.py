"""AWS Spot Placement Scores: the JSON of `aws ec2 get-spot-placement-scores`.

The API (EC2 GetSpotPlacementScores) answers {"SpotPlacementScores": [{"Region": "us-east-1",
"AvailabilityZoneId": "use1-az1", "Score": 9}, ...]}: a score from 1 to 10 of how likely the
request (instance types x target capacity) is to succeed in that region or zone. The answer does
not repeat the instance types asked for: give them as a top-level "InstanceTypes" list in the
file (as in the request) or with `--instance`. A score applies to the types asked for together.
"""

from __future__ import annotations

from datetime import datetime

from gpurent.spot.signals.base import SignalKind, SpotSignal, field_error, need_number, need_str

FORMAT = "aws-sps"


def parse(
    doc: object, where: str, *, as_of: datetime, instance: str | None = None
) -> list[SpotSignal]:
    """The scores of one API answer (already parsed JSON)."""
    if not isinstance(doc, dict) or "SpotPlacementScores" not in doc:
        raise field_error(where, "SpotPlacementScores", "missing; is this the API's JSON answer?")
    rows = doc["SpotPlacementScores"]
    if not isinstance(rows, list):
        raise field_error(where, "SpotPlacementScores", "expected a list")
    types: list[str]
    if instance is not None:
        types = [instance]
    else:
        given = doc.get("InstanceTypes")
        if (
            not isinstance(given, list)
            or not given
            or not all(isinstance(t, str) and t.strip() for t in given)
        ):
            raise field_error(
                where,
                "InstanceTypes",
                "missing or not a list of names; the API answer omits them: add the list you "
                "asked for, or pass --instance NAME",
            )
        types = [t.strip() for t in given]
    out: list[SpotSignal] = []
    for i, row in enumerate(rows):
        at = f"{where}: SpotPlacementScores[{i}]"
        region = need_str(row, "Region", at)
        zone = need_str(row, "AvailabilityZoneId", at) if "AvailabilityZoneId" in row else None
        score = need_number(row, "Score", at, low=1, high=10)
        out.extend(
            SpotSignal(
                source=f"{FORMAT}:{where}",
                as_of=as_of,
                provider="aws",
                region=region,
                zone=zone,
                instance=t,
                kind=SignalKind.PLACEMENT_SCORE,
                value=score,
                label=f"score {score:g}/10" + (f" ({', '.join(types)})" if len(types) > 1 else ""),
            )
            for t in types
        )
    return out

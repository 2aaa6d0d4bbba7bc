"""What a rule's expressions see (CONTRACT.md, Guardrails), as CEL values: `proposal`,
`precedents`, `calibration`, `now`; and the two probes every expression is tried on before
the service starts.

Absent is absent: a proposal field not sent, a precedent's field the record lacks (null)
are left out of their maps, so `has(p.confidence)` tells. `tags` is always there (`[]`
when none were sent, as a recorded decision stores it). Dates are CEL timestamps, so
`now - p.date < duration("2160h")` reads "within 90 days".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import cel

#: The proposal's fields an expression sees, by their wire names.
PROPOSAL_FIELDS: Final = ("title", "category", "stakes", "confidence", "context", "tags")
#: Each precedent's fields, by their wire names.
PRECEDENT_FIELDS: Final = (
    "id",
    "title",
    "distance",
    "outcome",
    "status",
    "date",
    "confidence",
    "category",
)


@dataclass(frozen=True, slots=True)
class CheckInput:
    """The variables of one check, as plain values: `proposal` (wire names, absent fields
    absent), `precedents` (at most 10 maps, `date` RFC 3339 text or absent), `calibration`
    (`brierScore` float or absent, `decisions` int), `now` (UTC)."""

    proposal: Mapping[str, Any]
    precedents: Sequence[Mapping[str, Any]]
    calibration: Mapping[str, Any]
    now: datetime

    def context(self) -> cel.Context:
        """The CEL context of this check: built once, every rule's expressions run on it."""
        return cel.Context(
            {
                "proposal": proposal_value(self.proposal),
                "precedents": [precedent_value(p) for p in self.precedents],
                "calibration": {k: v for k, v in self.calibration.items() if v is not None},
                "now": self.now,
            }
        )


def proposal_value(proposal: Mapping[str, Any]) -> dict[str, Any]:
    """The `proposal` map: PROPOSAL_FIELDS that are present and not null; `tags` always."""
    value = {k: proposal[k] for k in PROPOSAL_FIELDS if proposal.get(k) is not None}
    value.setdefault("tags", [])
    return value


def precedent_value(precedent: Mapping[str, Any]) -> dict[str, Any]:
    """One `precedents` item: PRECEDENT_FIELDS not null, `date` as a UTC datetime (a CEL
    timestamp). Raises ValueError for a `date` that is not ISO 8601."""
    value = {k: precedent[k] for k in PRECEDENT_FIELDS if precedent.get(k) is not None}
    if isinstance(value.get("date"), str):
        value["date"] = _instant(value["date"])
    return value


def _instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _precedent(n: int, text: str) -> dict[str, Any]:
    return {
        "id": f"probe-{n}",
        "title": text,
        "distance": 0.25,
        "outcome": "failure",
        "status": "reviewed",
        "date": "2026-01-01T00:00:00Z",
        "confidence": 0.5,
        "category": text,
    }


def full_probe(now: datetime) -> CheckInput:
    """Every field present, two precedents: an expression failing here fails on every
    input (a wrong type, a field that does not exist)."""
    proposal = {
        "title": "probe",
        "category": "probe",
        "stakes": "high",
        "confidence": 0.5,
        "context": "probe",
        "tags": ["probe"],
    }
    return CheckInput(
        proposal,
        [_precedent(0, "probe"), _precedent(1, "probe")],
        {"brierScore": 0.2, "decisions": 1},
        now,
    )


def largest_probe(now: datetime) -> CheckInput:
    """The largest input recordDecision's bounds allow: 64 tags of 64 characters, a
    title of 500 and a context of 10,000 characters, 10 precedents."""
    proposal = {
        "title": "t" * 500,
        "category": "c" * 200,
        "stakes": "high",
        "confidence": 0.5,
        "context": "x" * 10_000,
        "tags": [f"{n:02d}" + "g" * 62 for n in range(64)],
    }
    precedents = [_precedent(n, "p" * 500) for n in range(10)]
    return CheckInput(proposal, precedents, {"brierScore": 0.2, "decisions": 1}, now)

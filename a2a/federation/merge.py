"""One list from the answers of several services (CONTRACT.md, Federation).

By `distance` when every answering service embeds with the same model, so their cosine
distances compare: ascending, ties by service (this one first, then peers by name), then id.
Otherwise by `rank`: reciprocal rank fusion of each service's own order (Cormack, Clarke
and Buettcher 2009), each decision scoring 1 / (RRF_K + its rank in its service's list,
from 1), every service weighted 1, higher first, ties by service in the order asked, then
id. Each decision keeps the `distance` (and `score`) its service sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from a2a.results import Merge

#: The rank constant of reciprocal rank fusion (CONTRACT.md: 1 / (60 + rank)).
RRF_K = 60


class Ranked(Protocol):
    """A decision of a merged list: its id, distance and the peer that answered it."""

    @property
    def id(self) -> str: ...

    @property
    def distance(self) -> float | None: ...


D = TypeVar("D", bound=Ranked)


def merged(lists: Sequence[tuple[str | None, Sequence[D]]], by: Merge, limit: int) -> list[D]:
    """The first `limit` of `lists` (each service's name, None for this one, and its
    decisions in its own order; this service's first, then the peers as asked) as one
    list merged `by` distance or rank (module docstring)."""
    if by == "distance":
        keyed = [
            ((d.distance if d.distance is not None else 2.0), _service(name), d.id, d)
            for name, decisions in lists
            for d in decisions
        ]
        keyed.sort(key=lambda k: k[:3])
        return [k[3] for k in keyed[:limit]]
    fused = [
        (-1.0 / (RRF_K + rank), order, d.id, d)
        for order, (_, decisions) in enumerate(lists)
        for rank, d in enumerate(decisions, start=1)
    ]
    fused.sort(key=lambda k: k[:3])
    return [k[3] for k in fused[:limit]]


def _service(name: str | None) -> tuple[int, str]:
    """This service first, then peers by name."""
    return (0, "") if name is None else (1, name)

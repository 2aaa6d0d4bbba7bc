"""Scoring and ranking by structure: tag Jaccard, category and stakes matches. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only named here: the client's result models load no settings
    from a2a.settings import SimilarityWeights

#: Decimal places kept in `score` and its components; ties at this precision go by id.
SCORE_DECIMALS = 6


@dataclass(frozen=True, slots=True)
class Profile:
    """The structured fields similarity compares. Text is deliberately absent (seed 000).

    `tags` are normalised (see normalize_tags); an empty set and absent tags are the same.
    `category` and `stakes` are None when absent.
    """

    tags: frozenset[str] = frozenset()
    category: str | None = None
    stakes: str | None = None


@dataclass(frozen=True, slots=True)
class ScoreComponents:
    """Per-component similarity, each in [0, 1]: tag Jaccard, category match, stakes match."""

    tags: float
    category: float
    stakes: float


@dataclass(frozen=True, slots=True)
class Scored:
    """One ranked record: its id, weighted score in [0, 1] (higher = closer), components."""

    id: str
    score: float
    components: ScoreComponents


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b| in [0, 1]; 0.0 when both sets are empty (nothing in common)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _match(a: str | None, b: str | None) -> float:
    # Two absent values are not a match: missing data must not make records look alike.
    return 1.0 if a is not None and a == b else 0.0


def compare(probe: Profile, candidate: Profile) -> ScoreComponents:
    """Component similarities of `candidate` to `probe`, each rounded to SCORE_DECIMALS.

    A field absent on either side contributes 0 for its component.
    """
    return ScoreComponents(
        tags=round(jaccard(probe.tags, candidate.tags), SCORE_DECIMALS),
        category=_match(probe.category, candidate.category),
        stakes=_match(probe.stakes, candidate.stakes),
    )


def weighted_score(components: ScoreComponents, weights: SimilarityWeights) -> float:
    """sum(weight * component), rounded to SCORE_DECIMALS and kept within [0, 1]."""
    total = (
        weights.tags * components.tags
        + weights.category * components.category
        + weights.stakes * components.stakes
    )
    return min(max(round(total, SCORE_DECIMALS), 0.0), 1.0)


def rank_by_score(
    probe: Profile,
    candidates: Iterable[tuple[str, Profile]],
    weights: SimilarityWeights,
    limit: int,
) -> list[Scored]:
    """The `limit` (>= 0) candidates most like `probe`: score descending, then id ascending.

    Candidates whose rounded score is 0 are left out. Sorting on the rounded score keeps the
    order consistent with the numbers the client sees, so equal-looking scores are in id order.
    """
    scored = []
    for record_id, profile in candidates:
        components = compare(probe, profile)
        score = weighted_score(components, weights)
        if score > 0:
            scored.append(Scored(id=record_id, score=score, components=components))
    return sorted(scored, key=lambda s: (-s.score, s.id))[:limit]

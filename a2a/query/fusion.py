"""Score fusion of a semantic and a keyword ranking into one hybrid ranking. Pure: tested by tables.

Four methods, one entry point (`fuse`):

- `rrf`: reciprocal rank fusion, sum of weight / (k + rank) (Cormack, Clarke and Buettcher,
  SIGIR 2009). Ranks only; raw scores are ignored.
- `minmax`: convex combination of min-max normalised scores (each ranking's scores mapped
  onto [0, 1] by its own min and max).
- `dbsf`: distribution-based score fusion as in Qdrant: each ranking's scores mapped onto
  [0, 1] from [mean - 3 std, mean + 3 std] (population std), clipped, then summed with weights.
- `tmm`: convex combination of theoretical-min-max normalised scores (Bruch, Gai and
  Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023): the lower
  bound is the score's theoretical minimum (cosine similarity -1, BM25 0), the upper bound
  the ranking's best score.

The semantic score is cosine similarity, 1 - distance; the keyword score is BM25. A record
missing from one ranking gets 0 for that ranking's part. Fused scores are rounded to
`SCORE_DECIMALS` and sorted descending, ties by id, so equal input gives an equal list.
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol, get_args

from a2a.settings import FusionMethod as FusionMethod

#: Decimal places kept in fused scores; ties at this precision go by id.
SCORE_DECIMALS: Final = 6

FUSION_METHODS: Final[tuple[str, ...]] = get_args(FusionMethod)

#: Theoretical minimum of each score (tmm): cosine similarity and BM25.
_SEMANTIC_FLOOR: Final = -1.0
_KEYWORD_FLOOR: Final = 0.0


class SemanticMatch(Protocol):
    """A semantic match: record id and cosine distance in [0, 2] (lower is closer)."""

    @property
    def id(self) -> str: ...

    @property
    def distance(self) -> float: ...


class KeywordMatch(Protocol):
    """A keyword match: record id and BM25 score (> 0, higher is better)."""

    @property
    def id(self) -> str: ...

    @property
    def score(self) -> float: ...


@dataclass(frozen=True, slots=True)
class FusionConfig:
    """Which fusion and its parameters.

    `rrf_k` is used by `rrf` only. The weights scale each ranking's part in every method;
    for the score-based methods (`minmax`, `dbsf`, `tmm`) weights summing to 1 make the
    fused score a convex combination in [0, 1].
    """

    method: FusionMethod = "rrf"
    rrf_k: int = 60
    semantic_weight: float = 1.0
    keyword_weight: float = 1.0

    def describe(self) -> str:
        """A short label: `rrf k=60 w=1.0/1.0`, `minmax w=0.7/0.3`."""
        weights = f"w={self.semantic_weight:g}/{self.keyword_weight:g}"
        return (
            f"rrf k={self.rrf_k} {weights}" if self.method == "rrf" else f"{self.method} {weights}"
        )


class FusedHit(NamedTuple):
    """One fused result and where it came from (ranks are 1-based; None = not retrieved).

    `semantic_score` and `keyword_score` are each ranking's weighted part of `score`
    (unrounded parts, so they may differ from `score` in the last decimal). `distance` is
    the cosine distance when either ranking carried one, `bm25` the keyword score.
    """

    id: str
    score: float
    semantic_rank: int | None
    keyword_rank: int | None
    distance: float | None
    bm25: float | None
    semantic_score: float = 0.0
    keyword_score: float = 0.0


Normaliser = Callable[[Sequence[float], float], list[float]]


def min_max(scores: Sequence[float], floor: float = 0.0) -> list[float]:
    """Scores mapped onto [0, 1] by their min and max; all equal (or one) -> all 1.0."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high == low:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def three_sigma(scores: Sequence[float], floor: float = 0.0) -> list[float]:
    """Scores mapped onto [0, 1] from [mean - 3 std, mean + 3 std], clipped (Qdrant's DBSF).

    A spread of 0 (one score, or all equal) maps every score to 0.5, the mean's place.
    """
    if not scores:
        return []
    mean, std = statistics.fmean(scores), statistics.pstdev(scores)
    if std == 0:
        return [0.5] * len(scores)
    low, span = mean - 3 * std, 6 * std
    return [min(1.0, max(0.0, (s - low) / span)) for s in scores]


def theoretical_min_max(scores: Sequence[float], floor: float) -> list[float]:
    """Scores mapped onto [0, 1] from [theoretical `floor`, observed max] (Bruch et al.'s TMM)."""
    if not scores:
        return []
    span = max(scores) - floor
    return [1.0 if span <= 0 else (s - floor) / span for s in scores]


_NORMALISERS: Final[Mapping[str, Normaliser]] = {
    "minmax": min_max,
    "dbsf": three_sigma,
    "tmm": theoretical_min_max,
}


def _parts(
    semantic: Sequence[SemanticMatch], keyword: Sequence[KeywordMatch], config: FusionConfig
) -> tuple[dict[str, float], dict[str, float]]:
    """Each ranking's weighted part per record id, by the configured method."""
    if config.method == "rrf":
        return (
            {h.id: config.semantic_weight / (config.rrf_k + r) for r, h in enumerate(semantic, 1)},
            {h.id: config.keyword_weight / (config.rrf_k + r) for r, h in enumerate(keyword, 1)},
        )
    normalise = _NORMALISERS[config.method]
    similarity = normalise([1.0 - h.distance for h in semantic], _SEMANTIC_FLOOR)
    bm25 = normalise([h.score for h in keyword], _KEYWORD_FLOOR)
    return (
        {h.id: config.semantic_weight * s for h, s in zip(semantic, similarity, strict=True)},
        {h.id: config.keyword_weight * s for h, s in zip(keyword, bm25, strict=True)},
    )


def fuse(
    semantic: Sequence[SemanticMatch],
    keyword: Sequence[KeywordMatch],
    config: FusionConfig,
    limit: int | None = None,
) -> list[FusedHit]:
    """Both rankings fused by `config.method`, best first (score descending, then id).

    `semantic` must be ranked by distance ascending and `keyword` by BM25 descending (as the
    query service and the keyword index return them); a record id appears at most once in
    each. A keyword hit that carries a `distance` attribute lends it to the fused hit when
    the semantic ranking does not have the record. `limit` keeps only the first that many.
    Raises KeyError for an unknown method.
    """
    semantic_part, keyword_part = _parts(semantic, keyword, config)
    # Each record's 0-based place in each ranking (a repeated id: its last, as in the parts).
    semantic_place = {hit.id: at for at, hit in enumerate(semantic)}
    keyword_place = {hit.id: at for at, hit in enumerate(keyword)}
    scores = {
        record_id: round(part + keyword_part.get(record_id, 0.0), SCORE_DECIMALS)
        for record_id, part in semantic_part.items()
    }
    for record_id, part in keyword_part.items():
        if record_id not in semantic_part:
            scores[record_id] = round(0.0 + part, SCORE_DECIMALS)
    ranked = [(-score, record_id) for record_id, score in scores.items()]
    best = sorted(ranked) if limit is None else heapq.nsmallest(limit, ranked)
    hits = []
    for _, record_id in best:
        semantic_at, keyword_at = semantic_place.get(record_id), keyword_place.get(record_id)
        keyword_hit = None if keyword_at is None else keyword[keyword_at]
        if semantic_at is not None:
            distance: float | None = semantic[semantic_at].distance
        else:
            distance = getattr(keyword_hit, "distance", None)
        hits.append(
            FusedHit(
                id=record_id,
                score=scores[record_id],
                semantic_rank=None if semantic_at is None else semantic_at + 1,
                keyword_rank=None if keyword_at is None else keyword_at + 1,
                distance=distance,
                bm25=None if keyword_hit is None else keyword_hit.score,
                semantic_score=semantic_part.get(record_id, 0.0),
                keyword_score=keyword_part.get(record_id, 0.0),
            )
        )
    return hits


def explain(hit: FusedHit, config: FusionConfig) -> dict[str, Any]:
    """The score components of one fused hit for `explain: true` (camelCase wire keys).

    Every method: `method`, `semanticRank`, `semanticScore` (the weighted semantic part),
    `distance`, `keywordRank`, `keywordScore` (the weighted keyword part), `bm25`,
    `semanticWeight`, `keywordWeight`; `rrf` adds `rrfK`.
    """
    components: dict[str, Any] = {
        "method": config.method,
        "semanticRank": hit.semantic_rank,
        "semanticScore": round(hit.semantic_score, SCORE_DECIMALS),
        "distance": hit.distance,
        "keywordRank": hit.keyword_rank,
        "keywordScore": round(hit.keyword_score, SCORE_DECIMALS),
        "bm25": hit.bm25,
        "semanticWeight": config.semantic_weight,
        "keywordWeight": config.keyword_weight,
    }
    if config.method == "rrf":
        components["rrfK"] = config.rrf_k
    return components

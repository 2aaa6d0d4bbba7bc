"""Reciprocal rank fusion of a semantic and a keyword ranking. Pure: tested by tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from a2a.query.keyword import KeywordHit
from a2a.store import Hit

#: Decimal places kept in fused scores; ties at this precision go by id.
SCORE_DECIMALS = 6


@dataclass(frozen=True, slots=True)
class FusedHit:
    """One fused result and where it came from (ranks are 1-based; None = not retrieved)."""

    id: str
    score: float
    semantic_rank: int | None
    keyword_rank: int | None
    distance: float | None
    bm25: float | None


def reciprocal_rank_fusion(
    semantic: Sequence[Hit],
    keyword: Sequence[KeywordHit],
    *,
    k: int = 60,
    semantic_weight: float = 1.0,
    keyword_weight: float = 1.0,
) -> list[FusedHit]:
    """Both rankings fused by weighted RRF: score = sum of weight / (k + rank).

    `semantic` and `keyword` must already be ranked (best first). RRF (Cormack, Clarke and
    Buettcher, SIGIR 2009) uses ranks, not raw scores, so cosine distances and BM25 scores
    need no normalisation; k = 60 is their value. Sorted by score descending, then id.
    """
    distance = {hit.id: hit.distance for hit in semantic}
    bm25 = {hit.id: hit.score for hit in keyword}
    semantic_rank = {hit.id: rank for rank, hit in enumerate(semantic, 1)}
    keyword_rank = {hit.id: rank for rank, hit in enumerate(keyword, 1)}
    fused = []
    for record_id in semantic_rank.keys() | keyword_rank.keys():
        s_rank, k_rank = semantic_rank.get(record_id), keyword_rank.get(record_id)
        score = (semantic_weight / (k + s_rank) if s_rank else 0.0) + (
            keyword_weight / (k + k_rank) if k_rank else 0.0
        )
        fused.append(
            FusedHit(
                id=record_id,
                score=round(score, SCORE_DECIMALS),
                semantic_rank=s_rank,
                keyword_rank=k_rank,
                distance=distance.get(record_id),
                bm25=bm25.get(record_id),
            )
        )
    return sorted(fused, key=lambda hit: (-hit.score, hit.id))

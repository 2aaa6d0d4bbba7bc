"""The query logic behind cstp.queryDecisions, with no idea it sits behind HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from a2a.embeddings import Embedder
from a2a.query.filters import to_where
from a2a.query.fusion import FusedHit, reciprocal_rank_fusion
from a2a.query.keyword import KeywordHit, KeywordSearch
from a2a.query.params import QueryDecisionsParams
from a2a.query.ranking import rank_by_distance
from a2a.query.results import DecisionSummary, QueryDecisionsResult
from a2a.store import AsyncStore, Hit
from a2a.store.metadata import reason_types, summary_fields

# Hits beyond `limit` fetched from Chroma so that ties at the cut are ordered by id over
# more than Chroma's arbitrary pick (its HNSW order among equal distances is not stable).
TIE_MARGIN = 10


@dataclass(frozen=True, slots=True)
class HybridConfig:
    """Reciprocal rank fusion settings: k, each ranking's weight, candidates per ranking."""

    rrf_k: int = 60
    semantic_weight: float = 1.0
    keyword_weight: float = 1.0
    candidates: int = 100


class QueryService:
    """Decisions by meaning (Chroma), by keywords (BM25) or both, narrowed by filters.

    Filters are the same Chroma `where` clause in every mode, applied before the top k is
    cut. Results are deterministic: equal scores and distances are ordered by id.
    """

    def __init__(
        self,
        store: AsyncStore,
        embedder: Embedder,
        agent_id: str,
        clock: Callable[[], float] = time.perf_counter,
        hybrid: HybridConfig | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._agent_id = agent_id
        self._clock = clock
        self._hybrid = hybrid or HybridConfig()
        self._keyword = KeywordSearch(store)

    async def query_decisions(self, params: QueryDecisionsParams) -> QueryDecisionsResult:
        """Decisions matching `params.query` that pass every filter, at most `params.limit`.

        Raises StoreUnavailable when Chroma cannot answer (CSTP -32003).
        """
        started = self._clock()
        where = to_where(params.filters)
        if params.retrieval_mode == "keyword":
            decisions = await self._keyword_only(params, where)
        elif params.retrieval_mode == "hybrid":
            decisions = await self._fused(params, where)
        else:
            decisions = await self._semantic(params, where)
        return QueryDecisionsResult(
            decisions=decisions,
            total=len(decisions),
            query=params.query,
            query_time_ms=round((self._clock() - started) * 1000),
            agent=self._agent_id,
        )

    async def _semantic(
        self, params: QueryDecisionsParams, where: dict[str, Any] | None
    ) -> list[DecisionSummary]:
        hits = await self._nearest(params.query, where, params.limit + TIE_MARGIN)
        return [
            summarize(
                hit.id,
                hit.metadata,
                params.include_reasons,
                distance=hit.distance,
                explain={"distance": hit.distance} if params.explain else None,
            )
            for hit in rank_by_distance(hits, params.limit)
        ]

    async def _keyword_only(
        self, params: QueryDecisionsParams, where: dict[str, Any] | None
    ) -> list[DecisionSummary]:
        hits = await self._keyword.search(params.query, params.limit, where)
        metadata = await self._metadata([hit.id for hit in hits])
        return [
            summarize(
                hit.id,
                metadata.get(hit.id, {}),
                params.include_reasons,
                score=hit.score,
                explain={"bm25": hit.score, "keywordRank": rank} if params.explain else None,
            )
            for rank, hit in enumerate(hits, 1)
        ]

    async def _fused(
        self, params: QueryDecisionsParams, where: dict[str, Any] | None
    ) -> list[DecisionSummary]:
        depth = max(self._hybrid.candidates, params.limit)
        semantic = rank_by_distance(await self._nearest(params.query, where, depth), depth)
        keyword = await self._keyword.search(params.query, depth, where)
        fused = reciprocal_rank_fusion(
            semantic,
            keyword,
            k=self._hybrid.rrf_k,
            semantic_weight=self._hybrid.semantic_weight,
            keyword_weight=self._hybrid.keyword_weight,
        )[: params.limit]
        known = {hit.id: hit.metadata for hit in semantic}
        missing = [hit.id for hit in fused if hit.id not in known]
        known.update(await self._metadata(missing))
        return [
            summarize(
                hit.id,
                known.get(hit.id, {}),
                params.include_reasons,
                distance=hit.distance,
                score=hit.score,
                explain=self._components(hit) if params.explain else None,
            )
            for hit in fused
        ]

    def _components(self, hit: FusedHit) -> dict[str, Any]:
        config = self._hybrid

        def part(weight: float, rank: int | None) -> float:
            return 0.0 if rank is None else round(weight / (config.rrf_k + rank), 6)

        return {
            "semanticRank": hit.semantic_rank,
            "semanticScore": part(config.semantic_weight, hit.semantic_rank),
            "distance": hit.distance,
            "keywordRank": hit.keyword_rank,
            "keywordScore": part(config.keyword_weight, hit.keyword_rank),
            "bm25": hit.bm25,
            "rrfK": config.rrf_k,
        }

    async def _nearest(self, query: str, where: dict[str, Any] | None, n: int) -> list[Hit]:
        vector = await self._store.workers.run(lambda: self._embedder.embed_query(query))
        return await self._store.query(vector, where, n_results=n)

    async def _metadata(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        return {row.id: row.metadata for row in await self._store.get(ids=ids)}


def summarize(
    record_id: str,
    meta: dict[str, Any],
    include_reasons: bool,
    *,
    distance: float | None = None,
    score: float | None = None,
    explain: dict[str, Any] | None = None,
) -> DecisionSummary:
    """The wire summary of one stored record; fields the record lacks are None."""
    return DecisionSummary(
        id=record_id,
        **summary_fields(meta),
        distance=distance,
        reasons=reason_types(meta) if include_reasons else None,
        score=score,
        explain=explain,
    )


__all__ = ["TIE_MARGIN", "HybridConfig", "KeywordHit", "QueryService", "summarize"]

"""The query logic behind cstp.queryDecisions, with no idea it sits behind HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio.to_thread

from a2a.embeddings import Embedder
from a2a.query.filters import to_where
from a2a.query.params import QueryDecisionsParams
from a2a.query.ranking import rank_by_distance
from a2a.query.results import DecisionSummary, QueryDecisionsResult
from a2a.store import AsyncStore, Hit
from a2a.store.metadata import reason_types

# Hits beyond `limit` fetched from Chroma so that ties at the cut are ordered by id over
# more than Chroma's arbitrary pick (its HNSW order among equal distances is not stable).
TIE_MARGIN = 10


class QueryService:
    """Semantic search over stored decisions, narrowed by structured filters in Chroma."""

    def __init__(
        self,
        store: AsyncStore,
        embedder: Embedder,
        agent_id: str,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._agent_id = agent_id
        self._clock = clock

    async def query_decisions(self, params: QueryDecisionsParams) -> QueryDecisionsResult:
        """Decisions nearest to `params.query` that pass every filter, at most `params.limit`.

        Raises StoreUnavailable when Chroma cannot answer (CSTP -32003).
        """
        started = self._clock()
        vector = await anyio.to_thread.run_sync(self._embedder.embed_query, params.query)
        hits = await self._store.query(
            vector, to_where(params.filters), n_results=params.limit + TIE_MARGIN
        )
        decisions = [
            summarize(hit, params.include_reasons) for hit in rank_by_distance(hits, params.limit)
        ]
        return QueryDecisionsResult(
            decisions=decisions,
            total=len(decisions),
            query=params.query,
            query_time_ms=round((self._clock() - started) * 1000),
            agent=self._agent_id,
        )


def summarize(hit: Hit, include_reasons: bool) -> DecisionSummary:
    """The wire summary of one hit; fields the record lacks are None."""
    meta = hit.metadata
    return DecisionSummary(
        id=hit.id,
        title=meta.get("title"),
        category=meta.get("category"),
        confidence=meta.get("confidence"),
        stakes=meta.get("stakes"),
        status=meta.get("status"),
        outcome=meta.get("outcome"),
        date=meta.get("date"),
        distance=hit.distance,
        source=meta.get("source"),
        reasons=reason_types(meta) if include_reasons else None,
    )

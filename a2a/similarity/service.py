"""The logic behind cstp.findSimilarDecisions, with no idea it sits behind HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from a2a.errors import FieldError, InvalidParams
from a2a.query.filters import to_where
from a2a.similarity.params import FindSimilarDecisionsParams, Proposal
from a2a.similarity.results import FindSimilarDecisionsResult, SimilarDecision, no_match_reason
from a2a.similarity.scoring import Profile, Scored, normalize_tags, rank_by_score
from a2a.similarity.weights import SimilarityWeights
from a2a.store import AsyncStore
from a2a.store.metadata import summary_fields


class SimilarityService:
    """Prior decisions ranked by structural similarity (seed 000), narrowed by filters in Chroma.

    Every record passing the filters is scored, so a call reads the metadata of all of them:
    linear in the filtered store, which suits stores of thousands of decisions.
    """

    def __init__(
        self,
        store: AsyncStore,
        weights: SimilarityWeights,
        agent_id: str,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._store = store
        self._weights = weights
        self._agent_id = agent_id
        self._clock = clock

    async def find_similar_decisions(
        self, params: FindSimilarDecisionsParams
    ) -> FindSimilarDecisionsResult:
        """Decisions most like the proposal or stored decision, at most `params.limit`.

        A stored decision is never its own neighbour. Records scoring 0 are left out.
        Raises InvalidParams (field `decisionId`) when no stored decision has that id, and
        StoreUnavailable when Chroma cannot answer (CSTP -32003).
        """
        started = self._clock()
        probe, own_id = await self._probe(params)
        records = await self._store.get(where=to_where(params.filters))
        metadata = {r.id: r.metadata for r in records if r.id != own_id}
        candidates = ((i, stored_profile(m)) for i, m in metadata.items())
        ranked = rank_by_score(probe, candidates, self._weights, params.limit)
        decisions = [summarize(s, metadata[s.id]) for s in ranked]
        return FindSimilarDecisionsResult(
            decisions=decisions,
            total=len(decisions),
            query_time_ms=round((self._clock() - started) * 1000),
            agent=self._agent_id,
            reason=no_match_reason(probe),
        )

    async def _probe(self, params: FindSimilarDecisionsParams) -> tuple[Profile, str | None]:
        """The profile to compare against, and the id to leave out of the results."""
        if params.proposal is not None:
            return proposal_profile(params.proposal), None
        assert params.decision_id is not None  # the params model requires exactly one
        found = await self._store.get(ids=[params.decision_id])
        if not found:
            raise InvalidParams([FieldError("decisionId", "no stored decision has this id")])
        return stored_profile(found[0].metadata), params.decision_id


def proposal_profile(proposal: Proposal) -> Profile:
    """The profile of a proposal as sent."""
    return Profile(
        tags=normalize_tags(proposal.tags or []),
        category=proposal.category,
        stakes=proposal.stakes,
    )


def stored_profile(metadata: dict[str, Any]) -> Profile:
    """The profile of a stored record from its Chroma metadata (absent keys are absent)."""
    return Profile(
        tags=normalize_tags(_stored_tags(metadata)),
        category=_text(metadata.get("category")),
        stakes=_text(metadata.get("stakes")),
    )


def summarize(scored: Scored, metadata: dict[str, Any]) -> SimilarDecision:
    """The wire summary of one ranked record; fields the record lacks are None."""
    return SimilarDecision(
        id=scored.id,
        **summary_fields(metadata),
        tags=_stored_tags(metadata),
        score=scored.score,
        score_components=scored.components,
    )


def _stored_tags(metadata: dict[str, Any]) -> list[str]:
    stored = metadata.get("tags")
    # Chroma keeps a list; an empty one is stored as an absent key (a2a.store.metadata).
    return [str(tag) for tag in stored] if isinstance(stored, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None

"""The logic behind cstp.findSimilarDecisions, with no idea it sits behind HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from a2a.concurrency import Lane
from a2a.errors import FieldError, InvalidParams
from a2a.index import SearchIndex
from a2a.index.sync import LiveIndex
from a2a.index.topk import top_k
from a2a.records import normalize_tags
from a2a.records.summary import DecisionMetadata
from a2a.settings import SimilarityWeights
from a2a.similarity.params import FindSimilarDecisionsParams, Proposal
from a2a.similarity.results import FindSimilarDecisionsResult, SimilarDecision, no_match_reason
from a2a.similarity.scoring import Profile, Scored, rank_by_score
from a2a.store.async_store import AsyncStore


class SimilarityService:
    """Prior decisions ranked by structural similarity (seed 000), narrowed by filters.

    Answered from the search index: the filter mask, tag postings and category and
    stakes columns give every record sharing anything with the probe, scored in numpy;
    only the top candidates are scored again by `a2a.similarity.scoring` for the result.
    `index` defaults to a LiveIndex of `store` of the service's own.
    """

    def __init__(
        self,
        store: AsyncStore,
        weights: SimilarityWeights,
        agent_id: str,
        clock: Callable[[], float] = time.perf_counter,
        index: LiveIndex | None = None,
        workers: Lane | None = None,
    ) -> None:
        self._weights = weights
        self._agent_id = agent_id
        self._clock = clock
        self._live = index or LiveIndex(store.sync)
        self._workers = workers or store.workers

    async def find_similar_decisions(
        self, params: FindSimilarDecisionsParams
    ) -> FindSimilarDecisionsResult:
        """Decisions most like the proposal or stored decision, at most `params.limit`.

        A stored decision is never its own neighbour. Records scoring 0 are left out.
        Raises InvalidParams (field `decisionId`) when no stored decision has that id, and
        StoreUnavailable when Chroma cannot answer (CSTP -32003).
        """
        started = self._clock()
        index = await self._live.current()
        decisions, probe = await self._workers.run(lambda: self._answer(index, params))
        return FindSimilarDecisionsResult(
            decisions=decisions,
            total=len(decisions),
            query_time_ms=round((self._clock() - started) * 1000),
            agent=self._agent_id,
            reason=no_match_reason(probe),
        )

    def _answer(
        self, index: SearchIndex, params: FindSimilarDecisionsParams
    ) -> tuple[list[SimilarDecision], Profile]:
        """The ranked decisions and the probe they were compared with."""
        with index.reading():
            mask = index.mask(params.filters).copy()
            if params.proposal is not None:
                probe = proposal_profile(params.proposal)
            else:
                assert params.decision_id is not None  # the params model requires one
                own = index.row_of(params.decision_id)
                if own is None:
                    missing = FieldError("decisionId", "no stored decision has this id")
                    raise InvalidParams([missing])
                probe = stored_profiles(index, [own])[0]
                mask[own] = False
            rows = self._candidates(index, probe, mask, params.limit)
            summaries = index.summaries(rows)
            (tags,) = index.fields(rows, ("tags",))
            profiles = stored_profiles(index, rows)
        found = {s.id: (s, t) for s, t in zip(summaries, tags, strict=True)}
        candidates = ((s.id, p) for s, p in zip(summaries, profiles, strict=True))
        ranked = rank_by_score(probe, candidates, self._weights, params.limit)
        return [summarize(s, *found[s.id]) for s in ranked], probe

    def _candidates(
        self, index: SearchIndex, probe: Profile, mask: np.ndarray, limit: int
    ) -> list[int]:
        rows, jaccard, same_category, same_stakes = index.similar(
            probe.tags, probe.category, probe.stakes, mask
        )
        w = self._weights
        scores = (
            w.tags * np.round(jaccard, 6)
            + w.category * same_category.astype(np.float64)
            + w.stakes * same_stakes.astype(np.float64)
        )
        scores = np.clip(scores, 0.0, 1.0)  # as weighted_score keeps it
        keep = np.round(scores, 6) > 0
        chosen = top_k(scores[keep], rows[keep], limit, index.ids, descending=True)
        return [row for row, _ in chosen]


def proposal_profile(proposal: Proposal) -> Profile:
    """The profile of a proposal as sent."""
    return Profile(
        tags=normalize_tags(proposal.tags or []),
        category=proposal.category,
        stakes=proposal.stakes,
    )


def stored_profiles(index: SearchIndex, rows: Sequence[int]) -> list[Profile]:
    """The profile of the record at each of `rows`: its tags (normalised), category and
    stakes, from the index's columns (call under `index.reading()`)."""
    tags, categories, stakes = index.fields(rows, ("tags", "category", "stakes"))
    return [
        Profile(tags=normalize_tags(t), category=c, stakes=s)
        for t, c, s in zip(tags, categories, stakes, strict=True)
    ]


def summarize(scored: Scored, summary: DecisionMetadata, tags: Sequence[str]) -> SimilarDecision:
    """The wire summary of one ranked record (`tags`: its own, as stored); fields the
    record lacks are None."""
    return SimilarDecision(
        **summary.model_dump(),
        tags=list(tags),
        score=scored.score,
        score_components=scored.components,
    )

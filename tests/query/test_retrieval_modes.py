"""retrievalMode semantic / keyword / hybrid on real embedded Chroma and the real model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from a2a.embeddings import Embedder
from a2a.query.fusion import FusedHit, FusionConfig, fuse
from a2a.query.keyword import KeywordHit
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import QueryService
from a2a.records import DecisionRecord
from a2a.rpc.protocol import to_wire
from a2a.settings import Settings
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records

MODES = ["semantic", "keyword", "hybrid"]
#: Words from every sample record, so that BM25 matches each one at least once.
EVERY_TITLE = " ".join(record.title for record in SAMPLE)


def _service(store: ChromaDecisionStore, embedder: Embedder) -> QueryService:
    return QueryService(AsyncStore(store, 10), embedder, agent_id="a")


@pytest.fixture
def service(sample_store: ChromaDecisionStore, embedder: Embedder) -> QueryService:
    return _service(sample_store, embedder)


async def _run(service: QueryService, **params: Any) -> list[dict[str, Any]]:
    result = await service.query_decisions(QueryDecisionsParams.model_validate(params))
    return [to_wire(d) for d in result.decisions]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"stakes": ["low"]}, {"d03", "d05"}),
        ({"status": ["decided", "reviewed"], "minConfidence": 0.8}, {"d01", "d04"}),
        ({"dateAfter": "2026-01-01", "dateBefore": "2026-01-01"}, {"d05"}),
        ({"category": "nothing-has-this"}, set()),
    ],
    ids=["stakes", "status-and-confidence", "offset-day", "no-match"],
)
async def test_filters_apply_the_same_way_in_every_mode(
    service: QueryService, mode: str, filters: dict[str, Any], expected: set[str]
) -> None:
    found = await _run(service, query=EVERY_TITLE, filters=filters, limit=50, retrievalMode=mode)
    assert {d["id"] for d in found} == expected


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
async def test_filters_apply_before_the_top_k_is_cut(service: QueryService, mode: str) -> None:
    # d02 (Kafka, medium stakes) is by far the best match; cutting to 1 before filtering
    # would leave nothing. Filtered first, the low-stakes d03 (flags in the database) wins.
    found = await _run(
        service,
        query="Kafka Kafka event bus services database",
        retrievalMode=mode,
        limit=1,
        filters={"stakes": "low"},
    )
    assert [d["id"] for d in found] == ["d03"]


async def test_keyword_mode_scores_exact_terms_and_carries_the_cosine_distance(
    service: QueryService,
) -> None:
    (top, *_) = await _run(service, query="Kafka brokers", retrievalMode="keyword", explain=True)
    semantic = {d["id"]: d["distance"] for d in await _run(service, query="Kafka brokers")}
    assert top["id"] == "d02" and top["distance"] == semantic["d02"]
    assert top["score"] > 0 and top["explain"] == {"bm25": top["score"], "keywordRank": 1}


@pytest.mark.parametrize("mode", MODES)
async def test_max_distance_drops_farther_results_in_every_mode(
    store: ChromaDecisionStore, embedder: Embedder, mode: str
) -> None:
    index_records(store, embedder, SAMPLE)
    service = _service(store, embedder)
    everything = await _run(service, query=EVERY_TITLE, limit=50, retrievalMode=mode)
    cut = sorted(d["distance"] for d in everything)[2]
    params = QueryDecisionsParams.model_validate(
        {"query": EVERY_TITLE, "limit": 50, "retrievalMode": mode}
    )
    object.__setattr__(params, "max_distance", cut)  # the wire param lands with issue 11
    result = await service.query_decisions(params)
    assert {d.id for d in result.decisions} == {d["id"] for d in everything if d["distance"] <= cut}


async def test_keyword_mode_with_only_stop_words_finds_nothing(service: QueryService) -> None:
    assert await _run(service, query="the and of", retrievalMode="keyword") == []


async def test_hybrid_results_carry_score_distance_and_components(
    service: QueryService,
) -> None:
    found = await _run(
        service,
        query="per-tenant encryption keys for exports",
        retrievalMode="hybrid",
        explain=True,
        limit=3,
    )
    top = found[0]
    assert top["id"] == "d04"
    parts = top["explain"]
    assert parts["semanticRank"] == 1 and parts["keywordRank"] == 1
    assert top["score"] == pytest.approx(parts["semanticScore"] + parts["keywordScore"], abs=2e-6)
    assert top["distance"] == parts["distance"] and 0 <= top["distance"] <= 2
    assert [d["score"] for d in found] == sorted((d["score"] for d in found), reverse=True)


async def test_semantic_mode_has_no_score_but_explains_its_distance(
    service: QueryService,
) -> None:
    (top, *_) = await _run(service, query="database migration", explain=True)
    assert "score" not in top and top["explain"] == {"distance": top["distance"]}


@pytest.mark.parametrize("mode", MODES)
async def test_results_are_identical_across_a_restart(
    settings: Settings, embedder: Embedder, mode: str
) -> None:
    def open_store() -> ChromaDecisionStore:
        return ChromaDecisionStore(
            data_dir=settings.data_dir / "chroma",
            collection=settings.collection,
            embedding_model=embedder.name,
        )

    first_store = open_store()
    index_records(first_store, embedder, SAMPLE)
    params = {"query": "keys tenants database", "retrievalMode": mode, "limit": 6}
    before = await _run(_service(first_store, embedder), **params)
    first_store.close()
    after = await _run(_service(open_store(), embedder), **params)
    assert before == after and before


async def test_keyword_index_sees_records_written_after_it_was_built(
    store: ChromaDecisionStore, embedder: Embedder
) -> None:
    index_records(store, embedder, SAMPLE)
    service = _service(store, embedder)
    assert await _run(service, query="zeppelin", retrievalMode="keyword") == []
    writer = ChromaDecisionStore(  # another handle on the store, as another writer would be
        data_dir=store._data_dir,
        collection=store.collection_name,  # type: ignore[arg-type]
        embedding_model=embedder.name,
        revisions=store.revisions,  # one process's store objects on a folder share its markers
    )
    index_records(writer, embedder, [DecisionRecord(id="z1", title="Zeppelin freight")])
    assert [d["id"] for d in await _run(service, query="zeppelin", retrievalMode="keyword")] == [
        "z1"
    ]


@dataclass(frozen=True)
class Hit:
    """A semantic match: id and cosine distance."""

    id: str
    distance: float


def rrf(
    semantic: list[Hit], keyword: list[KeywordHit], k: int = 60, sw: float = 1, kw: float = 1
) -> list[FusedHit]:
    """Weighted reciprocal rank fusion of the two rankings (`fuse` with method rrf)."""
    return fuse(semantic, keyword, FusionConfig("rrf", k, sw, kw))


def test_rrf_ties_go_by_id_and_ranks_not_scores_decide() -> None:
    semantic = [Hit("b", 0.1), Hit("a", 0.2)]
    keyword = [KeywordHit("a", 9.0), KeywordHit("b", 1.0)]
    fused = rrf(semantic, keyword, k=60)
    assert [(h.id, h.semantic_rank, h.keyword_rank) for h in fused] == [("a", 2, 1), ("b", 1, 2)]
    assert fused[0].score == fused[1].score


def test_rrf_weights_shift_the_order() -> None:
    semantic = [Hit("s", 0.1)]
    keyword = [KeywordHit("k", 3.0)]
    assert [h.id for h in rrf(semantic, keyword, kw=2)] == ["k", "s"]
    assert [h.id for h in rrf(semantic, keyword, sw=2)] == ["s", "k"]

"""Exact top-k under masks: semantic vs brute force, BM25 vs brute force and vs bm25s."""

from __future__ import annotations

import math
import threading
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import bm25s
import numpy as np
import pytest
import Stemmer

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.search_index import EXACT_AT_MOST, MIN_COMPACT
from a2a.index.tokens import analyze, analyze_query
from a2a.index.vectors import GATHER_BELOW
from a2a.records import DecisionRecord, Reason
from a2a.records.filters import QueryFilters
from a2a.records.summary import SUMMARY_FIELDS, summary_fields
from tests.conftest import ADR_CORPUS, require_shared
from tests.index.helpers import unit_vectors

WORDS = [
    "postgres",
    "kafka",
    "migration",
    "tenant",
    "keys",
    "flags",
    "export",
    "queue",
    "cache",
    "broker",
    "index",
    "shard",
]


def _synthetic(count: int, dim: int = 16, seed: int = 1) -> list[IndexedRecord]:
    rng = np.random.default_rng(seed)
    vectors = unit_vectors(count, dim, seed)
    records = []
    for i in range(count):
        words = rng.choice(WORDS, size=int(rng.integers(0, 8)))
        record = DecisionRecord(
            id=f"r{i:05d}", title=f"r{i}", category=f"c{i % 7}", confidence=float(i % 11) / 10
        )
        records.append(IndexedRecord(record.id, record, vectors[i], " ".join(words)))
    return records


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    built = SearchIndex()
    built.upsert(_synthetic(3000))
    return built


def _masks(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    exactly = [np.zeros(size, dtype=bool) for _ in range(2)]
    for mask, count in zip(exactly, (EXACT_AT_MOST, EXACT_AT_MOST + 1), strict=True):
        mask[rng.choice(size, count, replace=False)] = True
    return [
        np.ones(size, dtype=bool),
        rng.random(size) < 0.5,
        rng.random(size) < GATHER_BELOW / 2,
        rng.random(size) < 0.003,
        np.zeros(size, dtype=bool),
        *exactly,
    ]


@pytest.mark.parametrize("given_rows", [False, True], ids=["mask", "mask+rows"])
@pytest.mark.parametrize(
    "which", range(7), ids=["all", "half", "narrow", "tiny", "none", "exact-at-most", "past-it"]
)
def test_semantic_top_k_equals_brute_force_under_every_mask(
    index: SearchIndex, which: int, given_rows: bool
) -> None:
    """Both plans (a float32 scan then exact re-scoring near the k-th; every passing row
    scored exactly, up to EXACT_AT_MOST rows given) give the exact top k."""
    query = unit_vectors(1, 16, seed=99)[0]
    with index.reading():
        mask = _masks(len(index))[which] & index.mask(None)
        rows = np.flatnonzero(mask).astype(np.int64) if given_rows else None
        found = index.semantic(query, mask, 10, rows)
        vectors = np.asarray([index._vectors.matrix[r] for r in range(len(index))])
    # The exact distance: float64 sums of the float32 vectors, as every mode shows it.
    exact = vectors.astype(np.float64) @ query.astype(np.float64)
    distances = np.clip(1 - exact, 0, 2).round(6)
    expected = sorted(np.flatnonzero(mask), key=lambda r: (distances[r], index.ids[r]))[:10]
    assert [m.row for m in found] == expected  # recall@10 = 1.0, same order
    assert [m.distance for m in found] == pytest.approx([distances[r] for r in expected], abs=1e-9)


def _brute_bm25(docs: list[list[str]], alive: np.ndarray, query: list[str]) -> dict[int, float]:
    live = [i for i in range(len(docs)) if alive[i]]
    n, avgdl = len(live), sum(len(docs[i]) for i in live) / len(live)
    scores: dict[int, float] = {}
    for term in query:
        df = sum(1 for i in live if term in docs[i])
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i in live:
            tf = Counter(docs[i])[term]
            if tf:
                norm = 1.5 * (1 - 0.75 + 0.75 * len(docs[i]) / avgdl)
                scores[i] = scores.get(i, 0.0) + idf * tf / (tf + norm)
    return scores


@pytest.mark.parametrize("which", range(4), ids=["all", "half", "narrow", "tiny"])
def test_keyword_top_k_equals_brute_force_bm25(index: SearchIndex, which: int) -> None:
    query = "kafka broker migration kafka"
    with index.reading():
        mask = _masks(len(index))[which] & index.mask(None)
        found = index.keyword(query, mask, 10)
        docs = [analyze(record.document) for record in _synthetic(3000)]
        scores = _brute_bm25(docs, index.mask(None), analyze(query))
    allowed = {r: round(s, 6) for r, s in scores.items() if mask[r]}
    expected = sorted(allowed, key=lambda r: (-allowed[r], index.ids[r]))[:10]
    assert [m.row for m in found] == expected
    assert [m.score for m in found] == pytest.approx([allowed[r] for r in expected], abs=1e-9)


def test_bm25_scores_match_bm25s_on_the_adr_corpus() -> None:
    require_shared()
    texts = [p.read_text(encoding="utf-8") for p in sorted(Path(ADR_CORPUS).rglob("*.md"))]
    index = SearchIndex()
    vectors = unit_vectors(len(texts), 4)
    index.upsert(
        [
            IndexedRecord(
                f"{i:04d}", DecisionRecord(id=f"{i:04d}", title=f"{i:04d}"), vectors[i], t
            )
            for i, t in enumerate(texts)
        ]
    )
    reference = bm25s.BM25()
    stemmer = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    reference.index(tokens, show_progress=False)
    for query in ("database migration strategy", "use kubernetes for deployment", "the logging"):
        expected = reference.get_scores(
            bm25s.tokenize(query, stopwords="en", stemmer=stemmer, return_ids=False)[0]
        )
        with index.reading():
            found = index.keyword(query, index.mask(None), len(texts))
        assert found, query
        for match in found:
            assert match.score == pytest.approx(float(expected[match.row]), abs=1e-5)
        assert len(found) == int(np.count_nonzero(expected > 0))


def test_a_store_whose_text_has_no_terms_answers_keyword_queries_with_nothing() -> None:
    index = SearchIndex()
    index.upsert([IndexedRecord("a", DecisionRecord(id="a", title="A"), [1.0, 0.0], "A")])
    with index.reading():
        assert index.keyword("A", index.mask(None), 5) == []
        assert index.keyword("anything at all", index.mask(None), 5) == []


def test_an_update_replaces_the_record_and_compaction_keeps_every_answer() -> None:
    index = SearchIndex()
    records = _synthetic(MIN_COMPACT * 2)
    index.upsert(records)
    moved = [
        IndexedRecord(
            r.id, DecisionRecord(id=r.id, title=r.id, category="moved"), r.embedding, "zeppelin"
        )
        for r in records
    ]
    index.upsert(moved[: MIN_COMPACT + 10])  # enough tombstones to compact
    assert len(index) == len(records) and index.alive_count == len(records)
    with index.reading():
        hits = index.keyword("zeppelin", index.mask(None), 5000)
        assert len(hits) == MIN_COMPACT + 10
        row = index.row_of(records[0].id)
        assert row is not None and index.summaries([row])[0].category == "moved"
        query = np.asarray(records[-1].embedding)
        assert index.semantic(query, index.mask(None), 1)[0].id == records[-1].id


def test_readers_and_a_writer_run_concurrently_without_errors() -> None:
    index = SearchIndex()
    index.upsert(_synthetic(500))
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(200):
                with index.reading():
                    mask = index.mask(None)
                    for match in index.keyword("kafka postgres", mask, 5):
                        index.summaries([match.row])
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for thread in readers:
        thread.start()
    for start in range(0, 2000, 100):
        index.upsert(_synthetic(100, seed=start)[:100])
    for thread in readers:
        thread.join()
    assert errors == []


@pytest.mark.parametrize("which", range(4), ids=["all", "half", "narrow", "tiny"])
def test_float16_vectors_rescored_exactly_give_the_float32_answer(which: int) -> None:
    records = _synthetic(3000)
    exact = {r.id: np.asarray(r.embedding, dtype=np.float32) for r in records}
    compact = SearchIndex("float16", exact_vectors=lambda ids: np.asarray([exact[i] for i in ids]))
    full = SearchIndex()
    compact.upsert(records)
    full.upsert(records)
    query = unit_vectors(1, 16, seed=5)[0]
    with compact.reading(), full.reading():
        mask = _masks(len(full))[which] & full.mask(None)
        assert compact.semantic(query, mask, 10) == full.semantic(query, mask, 10)


def test_cached_keyword_statistics_follow_every_write() -> None:
    docs = ["kafka broker", "kafka kafka queue", "postgres index", "kafka cache shard"]
    records = [
        IndexedRecord(f"k{i}", DecisionRecord(id=f"k{i}", title=f"k{i}"), [1.0, 0.0], d)
        for i, d in enumerate(docs)
    ]
    grown = SearchIndex()
    grown.upsert(records[:3])
    with grown.reading():
        grown.keyword("kafka queue", grown.mask(None), 10)  # fills the caches
    grown.upsert(records[3:])
    grown.remove(["k2"])
    rebuilt = SearchIndex()
    rebuilt.upsert([records[0], records[1], records[3]])
    with grown.reading(), rebuilt.reading():
        got = [(m.id, m.score) for m in grown.keyword("kafka queue", grown.mask(None), 10)]
        want = [(m.id, m.score) for m in rebuilt.keyword("kafka queue", rebuilt.mask(None), 10)]
    assert got == want


def test_a_tie_across_the_kth_distance_among_many_rows_is_cut_by_id() -> None:
    vectors = unit_vectors(200, 16, seed=3)
    twin = vectors[0]  # row 0 and every odd row share it: 101 rows at distance 0
    records = [
        IndexedRecord(
            f"t{i:03d}",
            DecisionRecord(id=f"t{i:03d}", title=f"t{i:03d}"),
            twin if i % 2 else vectors[i],
            "",
        )
        for i in range(200)
    ]
    index = SearchIndex()
    index.upsert(records[::-1])  # rows in the reverse order of ids
    with index.reading():
        got = index.semantic(twin, index.mask(None), 10)
    assert [m.id for m in got] == [f"t{i:03d}" for i in range(200) if i % 2 or i == 0][:10]
    assert {m.distance for m in got} == {0.0}


def test_rows_clamped_to_the_same_distance_tie_by_id_past_the_top_k_cut() -> None:
    """Inner products past 1 (or -1) all clamp to distance 0 (or 2) and tie, however far
    apart they are (stored vectors are only as unit as their writer made them, and a
    float16 index scores ~1e-3 off): the smallest id wins, as with no cut at all."""
    axis = np.eye(4, dtype=np.float32)

    def index_of(vectors: dict[str, np.ndarray]) -> SearchIndex:
        index = SearchIndex()
        index.upsert(
            [IndexedRecord(i, DecisionRecord(id=i, title=i), v, "") for i, v in vectors.items()]
        )
        return index

    # n0 has the smallest id and the smallest product past 1; a dozen rows are far off.
    near = index_of(
        {"n2": axis[0] * 1.0005, "n1": axis[0] * 1.0003, "n0": axis[0] * 1.0001}
        | {f"o{i:02d}": axis[1] for i in range(12)}
    )
    # f0 has the smallest id and the product furthest past -1.
    far = index_of({f"f{i}": axis[0] * -(1 + (8 - i) * 2e-4) for i in range(9)})
    with near.reading(), far.reading():
        nearest = near.semantic(axis[0], near.mask(None), 1)
        farthest = far.semantic(axis[0], far.mask(None), 1)
    assert [(m.id, m.distance) for m in nearest] == [("n0", 0.0)]
    assert [(m.id, m.distance) for m in farthest] == [("f0", 2.0)]


def test_a_row_shows_what_its_record_holds_with_absent_fields_as_none() -> None:
    full = DecisionRecord(
        id="full",
        title="Use Kafka",
        category="architecture",
        confidence=0.85,
        stakes="high",
        status="decided",
        outcome="success",
        date=datetime(2026, 1, 20, 14, tzinfo=UTC),
        source="decisions/full.md",
        recorded_by="agent-7",
        reasons=[Reason(type="analysis"), Reason(type="pattern")],
    )
    bare = DecisionRecord(id="bare", title="Bare")  # no field but its id and title: others None
    built = SearchIndex()
    built.upsert(
        [IndexedRecord(d.id, d, unit_vectors(1, 4, n)[0], "") for n, d in enumerate([full, bare])]
    )
    with built.reading():
        shown = built.shown([1, 0])
        reasons = built.reason_types([0, 1])
    assert shown == [
        ("bare", "Bare", *[None] * (len(SUMMARY_FIELDS) - 1)),
        ("full", *list(summary_fields(full).values())[1:]),
    ]
    assert shown[1][7] == "2026-01-20T14:00:00Z"
    assert shown[1][3] == 0.85 and shown[1][-1] == "agent-7"
    assert reasons == [["analysis", "pattern"], []]


def test_shown_fields_follow_their_records_through_updates_and_compaction() -> None:
    """A result's shown fields are kept by row: updates tombstone rows, compaction
    renumbers them, and every row still shows its own record's current fields."""
    built = SearchIndex()
    count = 2 * MIN_COMPACT
    vectors = unit_vectors(count, 4, 3)

    def version(n: int) -> list[IndexedRecord]:
        return [
            IndexedRecord(
                f"r{i}",
                DecisionRecord(id=f"r{i}", title=f"v{n} r{i}", confidence=i / count),
                vectors[i],
                "",
            )
            for i in range(count)
        ]

    built.upsert(version(1))
    # Each rewrite of half the records tombstones a third of the rows: compacted each time.
    built.upsert(version(2)[::2])
    built.upsert(version(3)[1::2])
    with built.reading():
        assert len(built) == count
        shown = built.shown(list(range(count)))
    titles = {s[0]: s[1] for s in shown}
    assert len(titles) == count
    assert all(titles[f"r{i}"] == f"v{2 if i % 2 == 0 else 3} r{i}" for i in range(count))
    assert shown[0][3] == int(shown[0][0][1:]) / count


def test_a_row_shows_the_same_distance_in_every_mode_and_under_every_filter() -> None:
    """Reported: one record's distance was 0.323951 in semantic mode and 0.323952 in keyword
    and hybrid mode. The scan sums float32 products in an order that depends on how many
    rows it reads and where they sit; every distance shown is now the float64 one."""
    records = []
    vectors = unit_vectors(3000, 384, seed=4)
    for i, vector in enumerate(vectors):
        decision = DecisionRecord(
            id=f"r{i:05d}", title=f"r{i:05d}", category="even" if i % 2 else "odd"
        )
        records.append(IndexedRecord(decision.id, decision, vector, "kafka"))
    built = SearchIndex()
    built.upsert(records)
    differing = 0
    with built.reading():
        for seed in range(8):
            query = unit_vectors(1, 384, seed=100 + seed)[0]
            everything = built.semantic(query, built.mask(None), len(built))
            shown = {m.row: m.distance for m in everything}
            rows = list(shown)
            assert built.distances(query, rows) == [shown[r] for r in rows]
            assert built.distances(query, rows[:3]) == [shown[r] for r in rows[:3]]
            odd = built.mask(QueryFilters(category="odd"))
            assert all(shown[m.row] == m.distance for m in built.semantic(query, odd, 50))
            exact = np.round(1 - vectors.astype(np.float64) @ query.astype(np.float64), 6)
            assert [shown[r] for r in rows] == exact[rows].tolist()
            scanned = np.round(1 - (vectors @ query).astype(np.float64), 6)
            differing += int(np.count_nonzero(scanned != exact))
    assert differing > 0  # the float32 scan does disagree with the exact sum on some rows


def test_a_query_is_analysed_once_and_gives_the_terms_of_a_document() -> None:
    """The work estimate and the search share one analysis of a query text (a cache)."""
    text = "Migrating the Billing queues to Kafka's streams"
    first = analyze_query(text)
    assert first == tuple(analyze(text)) == ("migrat", "bill", "queue", "kafka", "stream")
    assert analyze_query(text) is first

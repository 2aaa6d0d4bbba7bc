"""Typo tolerance of keyword queries: a2a.index.typos alone, then through a SearchIndex."""

from __future__ import annotations

import pytest

from a2a.index import IndexedRecord, SearchIndex
from a2a.index.bm25 import BM25Index
from a2a.index.tokens import analyze
from a2a.index.typos import edit_distance, max_edits, nearest
from a2a.store.stored import StoredDecision


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("kafka", "kafka", 0),
        ("stratgi", "strategi", 1),
        ("registar", "registrar", 1),
        ("stagng", "stage", 2),
        ("keycloack", "keycloak", 1),
        ("abc", "xyz", 3),
    ],
)
def test_edit_distance_counts_inserts_deletes_and_substitutions(
    a: str, b: str, expected: int
) -> None:
    assert edit_distance(a, b, 5) == expected


def test_edit_distance_stops_above_its_limit() -> None:
    assert edit_distance("kubernetes", "kafka", 2) == 3


def test_short_terms_are_never_corrected_and_long_ones_up_to_two_edits() -> None:
    assert [max_edits(t) for t in ("abc", "redis", "postgr", "kubernet")] == [0, 1, 2, 2]
    assert nearest("rdis", {"redis": 3}) == "redis"
    assert nearest("ab", {"abc": 9}) is None


def test_nearest_prefers_fewer_edits_then_the_more_frequent_term() -> None:
    vocabulary = {"cache": 2, "cachi": 7, "caches": 1}
    assert nearest("cachee", vocabulary) == "cache"  # one edit beats the frequent two-edit
    assert nearest("cachx", {"cache": 2, "cachi": 7}) == "cachi"  # tie: more frequent
    assert nearest("xache", vocabulary) is None  # the first letter is kept


def test_bm25_corrects_only_terms_it_never_indexed() -> None:
    index = BM25Index()
    index.add([analyze("kubernetes staging cluster"), analyze("kafka broker")])
    assert index.corrected(analyze("kubernets clustr kafka zzzzzz")) == (
        "kubernet",
        "cluster",
        "kafka",
        "zzzzzz",
    )


def test_a_typo_query_finds_its_record_by_keyword() -> None:
    texts = {
        "caching": "Caching strategy for the registrar: Redis in front of the EPP calls.",
        "cluster": "One Kubernetes cluster for dev, staging and production.",
        "excel": "Excel generation library for the export of consignment metadata.",
    }
    index = SearchIndex()
    index.upsert(
        [
            IndexedRecord(key, StoredDecision(key, title=key), [1.0, float(i)], text)
            for i, (key, text) in enumerate(texts.items())
        ]
    )
    with index.reading():
        for query, wanted in [
            ("caching stratgy for the registar", "caching"),
            ("kubernets cluster for dev stagng", "cluster"),
            ("excell generaton libary", "excel"),
        ]:
            found = index.keyword(query, index.mask(None), 3)
            assert found[0].id == wanted, query


def test_corrections_follow_the_vocabulary_when_records_are_added() -> None:
    index = BM25Index()
    index.add([analyze("kubernetes cluster")])
    assert index.corrected(("clustar",)) == ("cluster",)
    index.add([analyze("clustal alignment")])  # as near and as frequent, and first
    assert index.corrected(("clustal", "clustar")) == ("clustal", "clustal")

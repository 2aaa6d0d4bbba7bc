"""A category filter that names no stored category says so in the result's `note`."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.embeddings import Embedder
from a2a.query.matching import category_note, suggest_categories
from a2a.query.params import QueryDecisionsParams
from a2a.query.service import QueryService
from a2a.rpc.protocol import to_wire
from a2a.store.async_store import AsyncStore
from a2a.store.chroma import ChromaDecisionStore
from tests.conftest import SAMPLE, index_records


@pytest.fixture
def service(store: ChromaDecisionStore, embedder: Embedder) -> QueryService:
    index_records(store, embedder, SAMPLE)
    return QueryService(AsyncStore(store, timeout_seconds=10), embedder, agent_id="emerson")


async def _wire(service: QueryService, **params: Any) -> dict[str, Any]:
    return to_wire(await service.query_decisions(QueryDecisionsParams.model_validate(params)))


async def test_unknown_category_gets_a_note_naming_the_known_ones(service: QueryService) -> None:
    wire = await _wire(service, query="database", filters={"category": "Architecture"})
    assert wire["decisions"] == []
    assert wire["note"] == category_note(
        "Architecture",
        ["architecture", "library-selection", "scope-change", "security", "trade-off"],
    )
    assert '"architecture"' in wire["note"]


async def test_known_category_has_no_note_even_with_no_results(service: QueryService) -> None:
    wire = await _wire(
        service, query="database", filters={"category": "security", "stakes": ["low"]}
    )
    assert wire["decisions"] == []
    assert "note" not in wire


async def test_a_query_without_category_filter_has_no_note(service: QueryService) -> None:
    wire = await _wire(service, query="database")
    assert wire["decisions"]
    assert "note" not in wire
    assert "note" not in to_wire(await service.query_decisions(QueryDecisionsParams(query="x")))


@pytest.mark.parametrize(
    ("wanted", "known", "expected"),
    [
        ("Architecture", ["security", "architecture"], ["architecture", "security"]),
        ("securty", ["architecture", "security", "data"], ["security", "architecture", "data"]),
        ("zzz", ["c", "b", "a", "d", "e", "f"], ["a", "b", "c", "d", "e"]),
    ],
    ids=["case", "typo", "none-close-by-name"],
)
def test_suggestions_put_the_closest_categories_first(
    wanted: str, known: list[str], expected: list[str]
) -> None:
    assert suggest_categories(wanted, known) == expected


def test_note_for_an_empty_store_says_there_are_no_categories() -> None:
    assert "no categories" in category_note("x", [])

"""cstp.searchDocs against seed 003's JSON Schemas, over the shipped guide and over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from a2a.docs.catalog import load_catalog, split_sections
from a2a.docs.models import SearchDocsParams
from a2a.docs.ranking import tokenize
from a2a.docs.service import DocsSearchService, docs_service
from a2a.embeddings import Embedder
from a2a.errors import CatalogError
from a2a.settings import Settings
from tests.conftest import REPO, app_client, rpc_call

SCHEMAS = json.loads((Path(__file__).parent / "data" / "seed_003_schemas.json").read_text())
CATALOG = REPO / "a2a" / "docs" / "guide" / "catalog.yaml"


@pytest.fixture(scope="module")
def service() -> DocsSearchService:
    return DocsSearchService(load_catalog(CATALOG))


def _search(service: DocsSearchService, query: str, n: int = 3) -> dict[str, Any]:
    return service.search_docs(SearchDocsParams(query=query, max_sections=n)).model_dump()


@pytest.mark.parametrize(
    ("query", "doc_id"),
    [
        ("how are calls counted against rate limits", "limits"),
        ("what does -32002 rate limited mean", "errors"),
        ("filter decisions by dateAfter and dateBefore", "filters"),
        ("run against a Chroma server", "deployment"),
        ("invalid params error data errors field", "errors"),
    ],
    ids=["rate-limit", "error-code", "dates", "chroma-server", "invalid-params"],
)
def test_the_guide_answers_operator_questions_within_the_seed_schema(
    service: DocsSearchService, query: str, doc_id: str
) -> None:
    result = _search(service, query)
    jsonschema.validate(result, SCHEMAS["output"])
    assert result["sections"][0]["doc_id"] == doc_id
    assert [s["rank"] for s in result["sections"]] == list(range(len(result["sections"])))
    assert {d["doc_id"] for d in result["docs_covered"]} == {
        s["doc_id"] for s in result["sections"]
    }
    assert result["suggested_followups"]


def test_same_query_gives_the_same_sections_every_time(service: DocsSearchService) -> None:
    first = _search(service, "limits tokens errors", 10)
    assert all(_search(service, "limits tokens errors", 10) == first for _ in range(5))
    assert len(first["sections"]) == 10


def test_ties_are_ordered_by_doc_id_then_section_order(tmp_path: Path) -> None:
    for name in ("b", "a"):
        (tmp_path / f"{name}.md").write_text("# One\n\nkafka\n\n# Two\n\nkafka\n")
    (tmp_path / "catalog.yaml").write_text(
        "docs:\n"
        "  - {doc_id: b, title: B, doc_role: pattern, path: b.md}\n"
        "  - {doc_id: a, title: A, doc_role: reasoning, path: a.md}\n"
    )
    result = _search(DocsSearchService(load_catalog(tmp_path / "catalog.yaml")), "kafka", 10)
    assert [(s["doc_id"], s["heading"]) for s in result["sections"]] == [
        ("a", "One"),
        ("a", "Two"),
        ("b", "One"),
        ("b", "Two"),
    ]
    jsonschema.validate(result, SCHEMAS["output"])


def test_no_match_gives_empty_lists_and_a_refining_followup(service: DocsSearchService) -> None:
    result = _search(service, "xyzzy plugh")
    jsonschema.validate(result, SCHEMAS["output"])
    assert (result["sections"], result["docs_covered"]) == ([], [])
    assert len(result["suggested_followups"]) == 1


def test_followups_point_to_roles_the_results_did_not_cover(service: DocsSearchService) -> None:
    result = _search(service, "Chroma server mode", 1)
    assert result["sections"][0]["doc_role"] == "reasoning"
    pointed = [f for f in result["suggested_followups"] if "doc_id" in f]
    assert pointed and all("doc_id deployment" not in f for f in pointed)


def test_an_integral_number_is_an_integer_as_in_json_schema() -> None:
    jsonschema.validate({"query": "x", "max_sections": 2.0}, SCHEMAS["input"])
    assert SearchDocsParams.model_validate({"query": "x", "max_sections": 2.0}).max_sections == 2


def test_params_model_schema_is_the_seed_input_schema() -> None:
    schema = SearchDocsParams.model_json_schema()
    seed = SCHEMAS["input"]
    assert schema["required"] == seed["required"]
    assert schema["additionalProperties"] is False
    for name, spec in seed["properties"].items():
        ours = {
            k: v for k, v in schema["properties"][name].items() if k not in ("title", "default")
        }
        assert ours == spec


@pytest.mark.parametrize(
    "params",
    [
        {"query": "x", "max_sections": 0},
        {"query": "x", "max_sections": 11},
        {"query": "x", "max_sections": "3"},
        {"query": "x", "max_sections": True},
        {"query": "x", "max_sections": 2.5},
        {"query": 5},
        {},
        {"query": "x", "maxSections": 2},
    ],
    ids=["zero", "eleven", "string", "bool", "fraction", "query-number", "no-query", "camel-key"],
)
def test_inputs_outside_the_seed_schema_are_refused(params: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(params, SCHEMAS["input"])
    with pytest.raises(ValueError):
        SearchDocsParams.model_validate(params)


async def test_search_docs_over_json_rpc_validates_and_refuses_bad_params(
    settings: Settings, embedder: Embedder
) -> None:
    async with app_client(settings, embedder) as client:
        ok = await client.post(
            "/cstp",
            json=rpc_call("cstp.searchDocs", {"query": "batch of calls", "max_sections": 2}),
        )
        bad = await client.post(
            "/cstp", json=rpc_call("cstp.searchDocs", {"query": "x", "max_sections": 11})
        )
    result = ok.json()["result"]
    jsonschema.validate(result, SCHEMAS["output"])
    assert len(result["sections"]) == 2
    error = bad.json()["error"]
    assert error["code"] == -32602
    assert [e["field"] for e in error["data"]["errors"]] == ["max_sections"]


def test_sections_split_at_headings_but_not_inside_code_fences() -> None:
    text = "intro\n# A\nalpha\n```\n# not a heading\n```\n## B\n\n## C\nbeta\n"
    assert split_sections(text) == [
        ("", "intro"),
        ("A", "alpha\n```\n# not a heading\n```"),
        ("C", "beta"),
    ]


def test_tokenizer_is_fixed_lowercase_words_without_stopwords() -> None:
    assert tokenize("The Limits of a Batch, -32002!") == ["limit", "batch", "32002"]


def test_a_missing_catalog_serves_nothing_and_a_broken_one_stops_start_up(
    tmp_path: Path,
) -> None:
    empty = docs_service(tmp_path / "absent.yaml")
    assert empty.search_docs(SearchDocsParams(query="limits")).sections == []
    (tmp_path / "bad.yaml").write_text(
        "docs:\n  - {doc_id: x, title: X, doc_role: essay, path: x}\n"
    )
    with pytest.raises(CatalogError, match="CSTP_DOCS_CATALOG"):
        docs_service(tmp_path / "bad.yaml")
    (tmp_path / "gone.yaml").write_text(
        "docs:\n  - {doc_id: x, title: X, doc_role: pattern, path: nowhere.md}\n"
    )
    with pytest.raises(CatalogError, match="doc x"):
        docs_service(tmp_path / "gone.yaml")

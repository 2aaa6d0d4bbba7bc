"""The shipped ranking's MRR@10 on both dev sets: the numbers docs/ranking.md reports.

`make eval` prints them after indexing the ADRs with the model (~40 s); this runs the same
evaluation (`a2a.evaluation.modes.evaluate` over `QueryService`, as `cstp eval` builds
it) on a copy of the session's ADR store, whose vectors are the model's (tests/conftest.py).
A change to the model, the windows, BM25 or the fusion moves them: when it is meant to,
measure it by the rule of docs/ranking.md and write the new numbers there and here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a.app.runtime import Runtime
from a2a.app.stack import evaluation_service
from a2a.embeddings import Embedder
from a2a.evaluation.modes import ModeReport, evaluate
from a2a.evaluation.queries import load_queries
from a2a.settings import load_settings
from tests.conftest import DEV_QUERIES, REPO, copy_store

pytestmark = pytest.mark.slow

SETS = {"dev": DEV_QUERIES, "dev2": REPO / "data" / "queries-dev2.jsonl"}

#: MRR@10 by set and mode, as docs/ranking.md's "Every mode on both sets" gives them.
MEASURED = {
    "dev": {"semantic": 0.866, "keyword": 0.878, "hybrid": 0.919},
    "dev2": {"semantic": 0.856, "keyword": 0.706, "hybrid": 0.858},
}


@pytest.fixture(scope="module")
def reports(
    tmp_path_factory: pytest.TempPathFactory, adr_store: Path, embedder: Embedder
) -> Iterator[dict[str, dict[str, ModeReport]]]:
    data_dir = tmp_path_factory.mktemp("ranking")
    copy_store(adr_store, data_dir)
    settings = load_settings(data_dir=data_dir)
    runtime = Runtime.open(settings, role="eval", embedder=embedder)
    try:
        service = evaluation_service(settings, runtime)
        yield {
            name: {r.mode: r for r in asyncio.run(evaluate(service, load_queries(path)))}
            for name, path in SETS.items()
        }
    finally:
        runtime.close()


def test_every_mode_scores_what_docs_ranking_reports(
    reports: dict[str, dict[str, ModeReport]],
) -> None:
    scored = {name: {m: round(r.mrr10, 3) for m, r in by.items()} for name, by in reports.items()}
    assert scored == MEASURED, "ranking moved: measure it by docs/ranking.md's rule, then update"


@pytest.mark.parametrize("name", SETS)
def test_hybrid_ranks_above_both_single_modes(
    reports: dict[str, dict[str, ModeReport]], name: str
) -> None:
    """Issue 29's target that holds: the fusion is worth running on both sets."""
    modes = reports[name]
    assert modes["hybrid"].mrr10 > max(modes["semantic"].mrr10, modes["keyword"].mrr10)


def test_every_query_of_both_sets_was_scored(reports: dict[str, dict[str, ModeReport]]) -> None:
    assert {name: len(by["hybrid"].reciprocal_ranks) for name, by in reports.items()} == {
        "dev": 60,
        "dev2": 86,
    }

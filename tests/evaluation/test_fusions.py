"""The fusion comparison on hand-made candidate rankings."""

from __future__ import annotations

import pytest

from a2a.evaluation.fusions import FusionFamily, compare_fusions, format_fusion_table, winner
from a2a.evaluation.modes import Candidates, KeywordCandidate, SemanticCandidate
from a2a.evaluation.queries import LabelledQuery
from a2a.query.fusion import FusionConfig


def _candidates(semantic: list[str], keyword: list[str]) -> Candidates:
    return Candidates(
        [SemanticCandidate(i, 0.1 * n) for n, i in enumerate(semantic, 1)],
        [KeywordCandidate(i, 10.0 - n) for n, i in enumerate(keyword, 1)],
        {i: f"{i}.md" for i in {*semantic, *keyword}},
    )


# Relevant "t" is second in semantic and first in keyword for every query, so leaning on
# keyword puts it first; semantic alone has it second.
CANDIDATES = [_candidates(["x", "t", "y"], ["t", "x", "z"]) for _ in range(6)]
QUERIES = [LabelledQuery(f"q{n}", ("t.md",), kind=("a" if n % 2 else "b")) for n in range(6)]
FAMILIES = [
    FusionFamily("semantic-heavy", (FusionConfig("minmax", 60, 0.9, 0.1),)),
    FusionFamily(
        "minmax", (FusionConfig("minmax", 60, 0.9, 0.1), FusionConfig("minmax", 60, 0.2, 0.8))
    ),
]


def test_single_modes_and_each_family_are_scored_by_held_out_queries() -> None:
    results = compare_fusions(CANDIDATES, QUERIES, FAMILIES, folds=3, repeats=2)
    rows = {r.name: r for r in results}
    assert list(rows) == ["semantic", "keyword", "semantic-heavy", "minmax"]
    assert rows["semantic"].cv.mean == pytest.approx(0.5)
    assert rows["keyword"].cv.mean == pytest.approx(1.0)
    assert rows["semantic-heavy"].cv.mean == pytest.approx(0.5)
    # Every fold's training queries favour the keyword-heavy setting: it is always chosen.
    assert rows["minmax"].cv.mean == pytest.approx(1.0)
    assert rows["minmax"].cv.choices == {"minmax w=0.2/0.8": 6}
    assert rows["minmax"].chosen == FusionConfig("minmax", 60, 0.2, 0.8)
    assert rows["minmax"].cv_by_kind == {"a": 1.0, "b": 1.0}
    assert rows["semantic"].chosen is None  # nothing to ship for a single mode
    assert winner(results).name == "minmax"


def test_fusion_table_has_a_row_per_family_and_names_the_chosen_setting() -> None:
    table = format_fusion_table(compare_fusions(CANDIDATES, QUERIES, FAMILIES, folds=2))
    lines = table.splitlines()
    assert len(lines) == 2 + 4
    assert lines[-1].startswith("minmax") and "minmax w=0.2/0.8 (10/10)" in lines[-1]

"""The precedents block and `cstp query` say when results are tangential or absent (seed 001)."""

from __future__ import annotations

import pytest

from a2a.client.precedents import (
    BROAD_MATCH,
    BROAD_MATCH_DISTANCE,
    NO_MATCH,
    is_broad,
    match_note,
    render_precedents,
)
from a2a.query.results import DecisionSummary


def _decision(n: int, distance: float | None) -> DecisionSummary:
    return DecisionSummary.model_validate(
        {
            "id": f"d{n}",
            "title": f"Decision {n}",
            "category": None,
            "confidence": None,
            "stakes": None,
            "status": None,
            "outcome": None,
            "date": None,
            "distance": distance,
            "source": None,
        }
    )


def _header(block: str) -> list[str]:
    """The lines between the two `---` rules of the block."""
    lines = block.splitlines()
    return lines[1 : lines.index("---", 1)]


@pytest.mark.parametrize(
    ("distances", "max_distance", "note"),
    [
        ([0.3, 0.9], None, None),
        ([0.8, 0.5], None, None),  # the closest, not the first, decides
        ([0.7, 0.9], None, BROAD_MATCH),
        ([BROAD_MATCH_DISTANCE], None, None),  # at the threshold is still a match
        ([None, None], None, None),  # keyword hits without distance: nothing to judge by
        ([None, 0.9], None, BROAD_MATCH),
        ([], None, NO_MATCH),
        ([0.7, 0.9], 0.6, NO_MATCH),  # nothing within maxDistance
        ([0.5, 0.9], 0.6, None),
        ([0.65, 0.9], 0.8, None),
    ],
    ids=[
        "close-best",
        "close-but-not-first",
        "far-best",
        "at-threshold",
        "no-distances",
        "far-with-a-keyword-hit",
        "no-results",
        "all-past-max-distance",
        "some-within-max-distance",
        "within-max-and-threshold",
    ],
)
def test_match_note_says_broad_or_none_by_the_closest_distance(
    distances: list[float | None], max_distance: float | None, note: str | None
) -> None:
    decisions = [_decision(n, d) for n, d in enumerate(distances, 1)]
    assert match_note(decisions, max_distance=max_distance) == note


def test_block_notes_a_broad_match_above_the_results_when_the_best_hit_is_far() -> None:
    block = render_precedents([_decision(1, 0.82), _decision(2, 0.89)])
    assert _header(block) == [
        "**Precedent Search** complete",
        "Matches: 2 project-level",
        BROAD_MATCH,
    ]
    assert "### Relevant Precedents" in block and block.count("[project]") == 2


def test_block_has_no_note_when_the_best_hit_is_close() -> None:
    block = render_precedents([_decision(1, 0.3), _decision(2, 0.89)])
    assert BROAD_MATCH not in block and block.count("[project]") == 2


def test_block_leaves_out_decisions_past_max_distance() -> None:
    block = render_precedents([_decision(1, 0.3), _decision(2, 0.89)], max_distance=0.67)
    assert "**d1**" in block and "**d2**" not in block
    assert "Matches: 1 project-level" in block


def test_block_with_nothing_within_max_distance_says_first_time_decision() -> None:
    block = render_precedents([_decision(1, 0.82), _decision(2, 0.89)], max_distance=0.67)
    assert _header(block) == ["**Precedent Search** complete", "Matches: 0 project-level"]
    assert block.endswith(NO_MATCH) and "[project]" not in block


def test_broad_match_distance_can_be_given_for_another_model() -> None:
    decisions = [_decision(1, 0.5)]
    assert not is_broad(decisions)
    assert is_broad(decisions, broad_match_distance=0.4)
    assert BROAD_MATCH in render_precedents(decisions, broad_match_distance=0.4)

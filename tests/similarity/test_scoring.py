"""Structural scoring and ranking: pure functions, checked by tables."""

from __future__ import annotations

import pytest

from a2a.records import normalize_tags
from a2a.settings import DEFAULT_WEIGHTS, SimilarityWeights
from a2a.similarity.scoring import (
    Profile,
    ScoreComponents,
    compare,
    jaccard,
    rank_by_score,
    weighted_score,
)


def tags(*names: str) -> frozenset[str]:
    return frozenset(names)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["Postgres", " postgres ", "POSTGRES\t"], {"postgres"}),
        (["Zero-Downtime", "migration"], {"zero-downtime", "migration"}),
        (["  ", ""], set()),
        ([], set()),
        (["Straße"], {"strasse"}),
    ],
    ids=["case-and-space-merge", "mixed", "blank-dropped", "empty", "casefold"],
)
def test_tags_are_trimmed_and_case_folded(raw: list[str], expected: set[str]) -> None:
    assert normalize_tags(raw) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (tags("a", "b"), tags("a", "b"), 1.0),
        (tags("a", "b"), tags("b", "c"), 1 / 3),
        (tags("a"), tags("a", "b", "c", "d"), 0.25),
        (tags("a"), tags("b"), 0.0),
        (tags("a"), tags(), 0.0),
        (tags(), tags(), 0.0),
    ],
    ids=["equal", "one-of-three", "subset", "disjoint", "one-empty", "both-empty"],
)
def test_jaccard_is_intersection_over_union_and_zero_for_empty_sets(
    a: frozenset[str], b: frozenset[str], expected: float
) -> None:
    assert jaccard(a, b) == pytest.approx(expected)
    assert jaccard(b, a) == jaccard(a, b)


FULL = Profile(tags=tags("postgres", "migration"), category="architecture", stakes="high")


@pytest.mark.parametrize(
    ("probe", "candidate", "expected"),
    [
        (FULL, FULL, ScoreComponents(1.0, 1.0, 1.0)),
        (
            FULL,
            Profile(tags=tags("postgres", "kafka"), category="security", stakes="high"),
            ScoreComponents(0.333333, 0.0, 1.0),
        ),
        (Profile(stakes="high"), FULL, ScoreComponents(0.0, 0.0, 1.0)),
        (Profile(tags=tags("postgres")), FULL, ScoreComponents(0.5, 0.0, 0.0)),
        (FULL, Profile(), ScoreComponents(0.0, 0.0, 0.0)),
        (Profile(), Profile(), ScoreComponents(0.0, 0.0, 0.0)),
        (
            Profile(category="Architecture", stakes="high"),
            Profile(category="architecture", stakes="high"),
            ScoreComponents(0.0, 0.0, 1.0),
        ),
    ],
    ids=[
        "identical",
        "partial-tags-and-stakes",
        "probe-lacks-tags-and-category",
        "probe-has-only-tags",
        "candidate-lacks-all",
        "absent-never-matches-absent",
        "category-is-exact",
    ],
)
def test_components_score_each_field_and_absent_fields_score_zero(
    probe: Profile, candidate: Profile, expected: ScoreComponents
) -> None:
    assert compare(probe, candidate) == expected


@pytest.mark.parametrize(
    ("components", "weights", "expected"),
    [
        (ScoreComponents(1.0, 1.0, 1.0), DEFAULT_WEIGHTS, 1.0),
        (ScoreComponents(1.0, 0.0, 0.0), DEFAULT_WEIGHTS, 0.6),
        (ScoreComponents(0.0, 1.0, 0.0), DEFAULT_WEIGHTS, 0.25),
        (ScoreComponents(0.0, 0.0, 1.0), DEFAULT_WEIGHTS, 0.15),
        (ScoreComponents(0.333333, 0.0, 1.0), DEFAULT_WEIGHTS, 0.35),
        (ScoreComponents(0.5, 1.0, 0.0), DEFAULT_WEIGHTS, 0.55),
        (ScoreComponents(0.0, 0.0, 0.0), DEFAULT_WEIGHTS, 0.0),
        (
            ScoreComponents(1.0, 1.0, 1.0),
            SimilarityWeights(tags=0.1, category=0.2, stakes=0.7),
            1.0,
        ),
        (
            ScoreComponents(0.0, 0.0, 1.0),
            SimilarityWeights(tags=1.0, category=0.0, stakes=0.0),
            0.0,
        ),
    ],
    ids=[
        "all-match",
        "tags-only",
        "category-only",
        "stakes-only",
        "rounded-to-6-places",
        "half-tags-and-category",
        "nothing",
        "custom-weights-sum-stays-1",
        "zero-weight-component",
    ],
)
def test_score_is_the_weighted_sum_rounded_within_0_and_1(
    components: ScoreComponents, weights: SimilarityWeights, expected: float
) -> None:
    score = weighted_score(components, weights)
    assert score == expected
    assert 0.0 <= score <= 1.0


def test_ranking_is_by_score_then_id_and_leaves_out_zero_scores() -> None:
    probe = Profile(tags=tags("a", "b"), category="c", stakes="high")
    candidates = [
        ("z-best", Profile(tags=tags("a", "b"), category="c", stakes="high")),
        ("m-tie", Profile(stakes="high")),
        ("b-tie", Profile(stakes="high")),
        ("a-none", Profile(tags=tags("x"), category="other", stakes="low")),
        ("k-mid", Profile(tags=tags("a"), category="c")),
    ]
    ranked = rank_by_score(probe, candidates, DEFAULT_WEIGHTS, limit=10)
    assert [(s.id, s.score) for s in ranked] == [
        ("z-best", 1.0),
        ("k-mid", 0.55),
        ("b-tie", 0.15),
        ("m-tie", 0.15),
    ]


def test_ranking_is_the_same_whatever_the_input_order() -> None:
    probe = Profile(stakes="low")
    candidates = [(f"r{i}", Profile(stakes="low")) for i in (3, 1, 4, 0, 2)]
    forward = rank_by_score(probe, candidates, DEFAULT_WEIGHTS, limit=3)
    backward = rank_by_score(probe, reversed(candidates), DEFAULT_WEIGHTS, limit=3)
    assert [s.id for s in forward] == [s.id for s in backward] == ["r0", "r1", "r2"]


@pytest.mark.parametrize(("limit", "count"), [(0, 0), (1, 1), (2, 2), (50, 3)])
def test_ranking_returns_at_most_limit(limit: int, count: int) -> None:
    candidates = [(f"r{i}", Profile(stakes="low")) for i in range(3)]
    assert len(rank_by_score(Profile(stakes="low"), candidates, DEFAULT_WEIGHTS, limit)) == count

"""Score fusion: each method's arithmetic by tables, ordering and explain components."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from a2a.query.fusion import (
    FUSION_METHODS,
    FusionConfig,
    explain,
    fuse,
    min_max,
    theoretical_min_max,
    three_sigma,
)


@dataclass(frozen=True)
class Sem:
    id: str
    distance: float


@dataclass(frozen=True)
class Kw:
    id: str
    score: float


@dataclass(frozen=True)
class KwWithDistance:
    id: str
    score: float
    distance: float


SEMANTIC = [Sem("a", 0.2), Sem("b", 0.4), Sem("c", 0.6)]  # similarities 0.8, 0.6, 0.4
KEYWORD = [Kw("c", 10.0), Kw("d", 5.0)]


def _scores(config: FusionConfig) -> dict[str, float]:
    return {hit.id: hit.score for hit in fuse(SEMANTIC, KEYWORD, config)}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            FusionConfig("rrf", 60, 1.0, 1.0),
            {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62},
        ),
        (
            FusionConfig("rrf", 10, 0.4, 0.6),
            {"a": 0.4 / 11, "b": 0.4 / 12, "c": 0.4 / 13 + 0.6 / 11, "d": 0.6 / 12},
        ),
        (FusionConfig("minmax", 60, 0.7, 0.3), {"a": 0.7, "b": 0.35, "c": 0.3, "d": 0.0}),
        (
            FusionConfig("dbsf", 60, 0.5, 0.5),
            # similarities 0.8/0.6/0.4: mean 0.6, std sqrt(0.08/3); BM25 10/5: mean 7.5, std 2.5
            {
                "a": 0.5 * (0.5 + 0.2 / (6 * math.sqrt(0.08 / 3))),
                "b": 0.25,
                "c": 0.5 * (0.5 - 0.2 / (6 * math.sqrt(0.08 / 3))) + 0.5 * (2.5 + 7.5) / 15,
                "d": 0.5 * (5 - 0) / 15,
            },
        ),
        (
            FusionConfig("tmm", 60, 0.5, 0.5),
            {"a": 0.5, "b": 0.5 * 1.6 / 1.8, "c": 0.5 * 1.4 / 1.8 + 0.5, "d": 0.25},
        ),
    ],
    ids=["rrf-k60-equal", "rrf-k10-weighted", "minmax-convex", "dbsf-three-sigma", "tmm"],
)
def test_each_method_scores_by_its_formula(
    config: FusionConfig, expected: dict[str, float]
) -> None:
    scores = _scores(config)
    assert scores.keys() == expected.keys()
    for record_id, value in expected.items():
        assert scores[record_id] == pytest.approx(value, abs=1e-6), record_id


@pytest.mark.parametrize(
    ("normalise", "scores", "floor", "expected"),
    [
        (min_max, [3.0, 2.0, 1.0], 0.0, [1.0, 0.5, 0.0]),
        (min_max, [4.0, 4.0], 0.0, [1.0, 1.0]),
        (min_max, [7.0], 0.0, [1.0]),
        (three_sigma, [1.0, 1.0], 0.0, [0.5, 0.5]),
        # mean 1, std sqrt(99): 100 is past mean + 3 std and clipped to 1.
        (three_sigma, [100.0] + [0.0] * 99, 0.0, [1.0] + [0.5 - 1 / (6 * math.sqrt(99))] * 99),
        (theoretical_min_max, [0.5, 0.0], -1.0, [1.0, 2 / 3]),
        (theoretical_min_max, [0.0], 0.0, [1.0]),
        (min_max, [], 0.0, []),
    ],
    ids=[
        "minmax-spread",
        "minmax-equal",
        "minmax-one",
        "dbsf-no-spread-is-mid",
        "dbsf-outlier-clipped",
        "tmm-cosine-floor",
        "tmm-nothing-above-floor",
        "empty",
    ],
)
def test_normalisers_map_scores_onto_0_1(
    normalise: object, scores: list[float], floor: float, expected: list[float]
) -> None:
    assert callable(normalise)
    assert normalise(scores, floor) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("method", FUSION_METHODS)
def test_fused_list_is_sorted_by_score_then_id(method: str) -> None:
    # "x" and "y" each lead one ranking with the same weights: equal scores, id decides.
    semantic, keyword = [Sem("y", 0.1)], [Kw("x", 3.0)]
    fused = fuse(semantic, keyword, FusionConfig(method, 60, 1.0, 1.0))  # type: ignore[arg-type]
    assert [hit.id for hit in fused] == ["x", "y"]
    assert fused[0].score == fused[1].score


@pytest.mark.parametrize("method", FUSION_METHODS)
def test_score_based_fusion_with_convex_weights_stays_in_0_1(method: str) -> None:
    fused = fuse(SEMANTIC, KEYWORD, FusionConfig(method, 60, 0.3, 0.7))  # type: ignore[arg-type]
    assert all(0.0 <= hit.score <= 1.0 for hit in fused)


@pytest.mark.parametrize("method", FUSION_METHODS)
def test_empty_rankings_fuse_to_nothing_and_one_side_alone_keeps_its_order(method: str) -> None:
    config = FusionConfig(method, 60, 0.5, 0.5)  # type: ignore[arg-type]
    assert fuse([], [], config) == []
    assert [h.id for h in fuse(SEMANTIC, [], config)] == ["a", "b", "c"]
    assert [h.id for h in fuse([], KEYWORD, config)] == ["c", "d"]


def test_ranks_distance_and_bm25_are_carried_and_absent_side_is_none() -> None:
    fused = {h.id: h for h in fuse(SEMANTIC, KEYWORD, FusionConfig("minmax", 60, 0.5, 0.5))}
    c, d = fused["c"], fused["d"]
    assert (c.semantic_rank, c.keyword_rank, c.distance, c.bm25) == (3, 1, 0.6, 10.0)
    assert (d.semantic_rank, d.keyword_rank, d.distance, d.bm25) == (None, 2, None, 5.0)
    assert d.semantic_score == 0.0


def test_keyword_hit_distance_fills_in_when_semantic_ranking_lacks_the_record() -> None:
    keyword = [KwWithDistance("c", 10.0, 0.99), KwWithDistance("d", 5.0, 0.75)]
    fused = {h.id: h for h in fuse(SEMANTIC, keyword, FusionConfig())}
    assert fused["d"].distance == 0.75
    assert fused["c"].distance == 0.6  # the semantic ranking's own distance wins


def test_a_repeated_id_takes_its_last_hit_and_leaves_the_others_theirs() -> None:
    """Outside the contract (rankings hold an id once), but never another record's values:
    a break-it pass found a repeat shifting every later record onto its neighbour's hit."""
    keyword = [Kw("a", 5.0), Kw("a", 3.0), Kw("b", 1.0)]
    semantic = [Sem("x", 0.1), Sem("x", 0.2), Sem("y", 0.3)]
    fused = {h.id: h for h in fuse(semantic, keyword, FusionConfig())}
    assert (fused["a"].keyword_rank, fused["a"].bm25) == (2, 3.0)
    assert (fused["b"].keyword_rank, fused["b"].bm25) == (3, 1.0)
    assert (fused["x"].semantic_rank, fused["x"].distance) == (2, 0.2)
    assert (fused["y"].semantic_rank, fused["y"].distance) == (3, 0.3)


@pytest.mark.parametrize(
    ("config", "extra"),
    [
        (FusionConfig("rrf", 60, 1.0, 1.0), {"rrfK": 60}),
        (FusionConfig("minmax", 60, 0.7, 0.3), {}),
        (FusionConfig("dbsf", 60, 0.5, 0.5), {}),
        (FusionConfig("tmm", 60, 0.5, 0.5), {}),
    ],
    ids=list(FUSION_METHODS),
)
def test_explain_gives_each_part_and_the_method_parameters(
    config: FusionConfig, extra: dict[str, int]
) -> None:
    hit = next(h for h in fuse(SEMANTIC, KEYWORD, config) if h.id == "c")
    components = explain(hit, config)
    assert components == {
        "method": config.method,
        "semanticRank": 3,
        "semanticScore": pytest.approx(hit.semantic_score, abs=1e-6),
        "distance": 0.6,
        "keywordRank": 1,
        "keywordScore": pytest.approx(hit.keyword_score, abs=1e-6),
        "bm25": 10.0,
        "semanticWeight": config.semantic_weight,
        "keywordWeight": config.keyword_weight,
        **extra,
    }
    assert components["semanticScore"] + components["keywordScore"] == pytest.approx(hit.score)


def test_describe_names_method_and_parameters() -> None:
    assert FusionConfig("rrf", 100, 0.4, 0.6).describe() == "rrf k=100 w=0.4/0.6"
    assert FusionConfig("dbsf", 60, 0.5, 0.5).describe() == "dbsf w=0.5/0.5"

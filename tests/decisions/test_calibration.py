"""Brier score and reliability bins: tables of hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from a2a.decisions.calibration import CategoryScore, calibrate, outcome_scores

NAN = float("nan")


def test_outcomes_score_success_one_partial_half_failure_zero_others_not_at_all() -> None:
    scores = outcome_scores(["success", "partial", "failure", "abandoned", "pending", None, "x"])
    assert scores[:3].tolist() == [1.0, 0.5, 0.0]
    assert np.isnan(scores[3:]).all()


def test_brier_bins_and_categories_by_hand() -> None:
    # scored: (0.9, 1) (0.2, 0) (0.5, 0.5) (1.0, 0) ; the NaN rows are left out.
    confidence = np.array([0.9, 0.2, 0.5, 1.0, NAN, 0.7])
    score = np.array([1.0, 0.0, 0.5, 0.0, 1.0, NAN])
    categories = ["arch", "arch", None, "sec", "arch", "sec"]
    result = calibrate(confidence, score, categories, bins=2)
    # squared errors: 0.01, 0.04, 0, 1 -> mean 1.05 / 4
    assert result.decisions == 4
    assert result.brier_score == pytest.approx(1.05 / 4)
    assert [(b.low, b.high, b.count, b.mean_confidence, b.success_rate) for b in result.bins] == [
        (0.0, 0.5, 1, pytest.approx(0.2), 0.0),
        # 0.5 falls in [0.5, 1]; 1.0 in the closed last bin.
        (0.5, 1.0, 3, pytest.approx((0.9 + 0.5 + 1.0) / 3), pytest.approx(0.5)),
    ]
    assert result.by_category == [
        CategoryScore("arch", 2, pytest.approx(0.025)),
        CategoryScore("sec", 1, pytest.approx(1.0)),
        CategoryScore(None, 1, 0.0),
    ]


def test_empty_bins_have_zero_count_and_null_means() -> None:
    result = calibrate(np.array([0.05]), np.array([1.0]), ["a"], bins=5)
    assert [b.count for b in result.bins] == [1, 0, 0, 0, 0]
    assert result.bins[1].mean_confidence is None and result.bins[1].success_rate is None
    assert [(b.low, b.high) for b in result.bins] == [
        (0.0, 0.2),
        (0.2, 0.4),
        (0.4, 0.6),
        (0.6, 0.8),
        (0.8, 1.0),
    ]
    assert result.brier_score == pytest.approx(0.9025)


def test_no_scored_decision_gives_zero_and_null_score() -> None:
    result = calibrate(np.array([0.5, NAN]), np.array([NAN, 1.0]), [None, None], bins=3)
    assert result.decisions == 0
    assert result.brier_score is None
    assert [b.count for b in result.bins] == [0, 0, 0]
    assert result.by_category == []


@pytest.mark.parametrize(
    ("confidence", "slot"),
    [(0.0, 0), (0.1999, 0), (0.2, 1), (0.9999, 4), (1.0, 4)],
    ids=["zero", "below-edge", "on-edge", "below-one", "one-in-last-closed-bin"],
)
def test_a_confidence_falls_in_floor_of_its_bin(confidence: float, slot: int) -> None:
    result = calibrate(np.array([confidence]), np.array([1.0]), [None], bins=5)
    assert [b.count for b in result.bins][slot] == 1

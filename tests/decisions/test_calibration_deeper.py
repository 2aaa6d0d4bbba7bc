"""Murphy's decomposition, Wilson intervals, per agent and per month, checked against
independent computations: scikit-learn's brier_score_loss, statsmodels' Wilson interval,
and a plain-Python reimplementation of Murphy (1973) in exact fractions."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss
from statsmodels.stats.proportion import proportion_confint

from a2a.decisions.calibration import calibrate, wilson


def sample(seed: int, size: int, partial: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = random.Random(seed)
    outcomes = [1.0, 0.0, 0.5] if partial else [1.0, 0.0]
    confidence = np.array([round(rng.random(), 3) for _ in range(size)])
    score = np.array([rng.choice(outcomes) for _ in range(size)])
    return confidence, score


def murphy_by_hand(confidence: list[float], score: list[float], bins: int) -> dict[str, Fraction]:
    conf = [Fraction(c) for c in confidence]
    out = [Fraction(s) for s in score]
    n = len(conf)
    slots: dict[int, list[int]] = {}
    for i, c in enumerate(confidence):
        slots.setdefault(min(int(c * bins), bins - 1), []).append(i)
    mean = sum(out) / n
    rel = res = Fraction(0)
    binned = Fraction(0)
    for members in slots.values():
        f = sum(conf[i] for i in members) / len(members)
        o = sum(out[i] for i in members) / len(members)
        rel += len(members) * (f - o) ** 2
        res += len(members) * (o - mean) ** 2
        binned += sum((f - out[i]) ** 2 for i in members)
    unc = sum((o - mean) ** 2 for o in out) / n
    return {"reliability": rel / n, "resolution": res / n, "uncertainty": unc, "binned": binned / n}


@pytest.mark.parametrize(
    ("seed", "size", "bins", "partial"),
    [(1, 40, 5, False), (2, 300, 10, False), (3, 120, 4, True), (4, 7, 20, True)],
    ids=["binary-5", "binary-10", "partial-4", "sparse-20"],
)
def test_murphy_decomposition_matches_an_exact_reimplementation_and_its_identity(
    seed: int, size: int, bins: int, partial: bool
) -> None:
    confidence, score = sample(seed, size, partial)
    found = calibrate(confidence, score, [None] * size, bins)
    assert found.murphy is not None
    exact = murphy_by_hand(confidence.tolist(), score.tolist(), bins)
    assert found.murphy.reliability == pytest.approx(float(exact["reliability"]), abs=1e-12)
    assert found.murphy.resolution == pytest.approx(float(exact["resolution"]), abs=1e-12)
    assert found.murphy.uncertainty == pytest.approx(float(exact["uncertainty"]), abs=1e-12)
    assert found.murphy.brier_binned == pytest.approx(float(exact["binned"]), abs=1e-12)
    m = found.murphy
    assert abs(m.reliability - m.resolution + m.uncertainty - m.brier_binned) < 1e-9


def test_binary_uncertainty_is_o_times_one_minus_o_and_brier_matches_scikit_learn() -> None:
    confidence, score = sample(5, 200, partial=False)
    found = calibrate(confidence, score, [None] * 200, 5)
    rate = score.mean()
    assert found.murphy is not None
    assert found.murphy.uncertainty == pytest.approx(rate * (1 - rate), abs=1e-12)
    assert found.brier_score == pytest.approx(brier_score_loss(score, confidence), abs=1e-12)


@pytest.mark.parametrize(
    ("successes", "count"), [(0, 1), (1, 1), (3, 10), (7, 9), (50, 100), (0, 40), (12, 12)]
)
def test_wilson_interval_matches_statsmodels(successes: int, count: int) -> None:
    low, high = proportion_confint(successes, count, alpha=0.05, method="wilson")
    assert wilson(successes / count, count) == pytest.approx((low, high), abs=1e-12)


def test_each_bin_carries_the_wilson_interval_of_its_rate_and_empty_bins_none() -> None:
    confidence, score = sample(6, 60, partial=False)
    confidence = np.minimum(confidence, 0.89)  # the last two bins stay empty
    found = calibrate(confidence, score, [None] * 60, 20)
    for b in found.bins:
        if b.count == 0:
            assert (b.success_low, b.success_high) == (None, None)
            continue
        assert b.success_rate is not None
        successes = round(b.success_rate * b.count)
        expected = proportion_confint(successes, b.count, alpha=0.05, method="wilson")
        assert (b.success_low, b.success_high) == pytest.approx(expected, abs=1e-12)
        assert b.success_low is not None and b.success_high is not None
        assert b.success_low <= b.success_rate <= b.success_high
    assert any(b.count == 0 for b in found.bins)


def test_by_agent_and_by_month_score_their_own_rows() -> None:
    confidence = np.array([0.9, 0.2, 0.6, 0.8, 0.3])
    score = np.array([1.0, 1.0, 0.0, 0.5, 0.0])
    agents = ["ann", None, "bob", "ann", "bob"]
    dates = np.array(
        [
            datetime(2026, 1, 31, 23, 59, tzinfo=UTC).timestamp(),
            datetime(2026, 2, 1, tzinfo=UTC).timestamp(),
            np.nan,
            datetime(2025, 12, 5, tzinfo=UTC).timestamp(),
            datetime(2026, 2, 28, tzinfo=UTC).timestamp(),
        ]
    )
    found = calibrate(confidence, score, [None] * 5, 5, agents=agents, date_epoch=dates)
    squared = (confidence - score) ** 2
    assert [(g.group, g.decisions) for g in found.by_agent] == [("ann", 2), ("bob", 2), (None, 1)]
    assert found.by_agent[0].brier_score == pytest.approx((squared[0] + squared[3]) / 2)
    assert [(g.group, g.decisions) for g in found.by_month] == [
        ("2025-12", 1),
        ("2026-01", 1),
        ("2026-02", 2),
    ]
    assert found.by_month[2].brier_score == pytest.approx((squared[1] + squared[4]) / 2)


def test_no_scored_decision_has_no_decomposition() -> None:
    found = calibrate(np.array([np.nan]), np.array([1.0]), [None], 5, agents=[None])
    assert (found.murphy, found.by_agent, found.by_month) == (None, [], [])

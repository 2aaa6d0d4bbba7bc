"""The distance threshold between answered and off-topic best hits."""

from __future__ import annotations

import pytest

from a2a.evaluation.threshold import choose_threshold, load_off_topic


@pytest.mark.parametrize(
    ("answered", "off_topic", "threshold", "separated", "kept", "noise"),
    [
        ([0.25, 0.4, 0.604], [0.733, 0.8], 0.67, True, 1.0, 0.0),
        ([0.3], [0.5], 0.4, True, 1.0, 0.0),
        # Overlap: the cut after 0.5 keeps 3/4 answered and 0 off-topic (J = 0.75); after
        # 0.7 it keeps all answered but 1/3 of the noise (J = 0.67).
        ([0.2, 0.4, 0.5, 0.7], [0.6, 0.8, 0.9], 0.55, False, 0.75, 0.0),
        # Equal J at 0.45 and 0.8 (1/2 - 0 and 1 - 1/2): the smaller cut wins.
        ([0.3, 0.7], [0.6, 0.9], 0.45, False, 0.5, 0.0),
    ],
    ids=["gap-midpoint", "two-points", "overlap-youden", "tie-to-smaller"],
)
def test_threshold_is_the_gap_midpoint_or_the_best_youden_cut(
    answered: list[float],
    off_topic: list[float],
    threshold: float,
    separated: bool,
    kept: float,
    noise: float,
) -> None:
    result = choose_threshold(answered, off_topic)
    assert result.threshold == pytest.approx(threshold)
    assert result.separated is separated
    assert (result.answered_kept, result.off_topic_kept) == (pytest.approx(kept), noise)


@pytest.mark.parametrize(("answered", "off_topic"), [([], [0.8]), ([0.3], [])])
def test_an_empty_sample_is_refused(answered: list[float], off_topic: list[float]) -> None:
    with pytest.raises(ValueError, match="sample"):
        choose_threshold(answered, off_topic)


def test_off_topic_file_skips_comments_and_blank_lines() -> None:
    assert load_off_topic("# noise\n\noffice kitchen paint\n  tulips  \n") == [
        "office kitchen paint",
        "tulips",
    ]

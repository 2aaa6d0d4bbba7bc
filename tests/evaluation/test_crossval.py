"""k-fold cross-validation: disjoint stratified folds, choices made without the held-out fold."""

from __future__ import annotations

from collections import Counter

import pytest

from a2a.evaluation.crossval import (
    choose,
    cross_validate,
    repeated_cross_validation,
    stratified_folds,
)

STRATA = ["paraphrase"] * 36 + ["keyword"] * 15 + ["filtered"] * 9


@pytest.mark.parametrize("k", [2, 5, 10, 60])
def test_folds_are_disjoint_cover_every_query_and_differ_in_size_by_at_most_one(k: int) -> None:
    folds = stratified_folds(STRATA, k, seed=3)
    indices = [i for fold in folds for i in fold]
    assert len(folds) == k
    assert sorted(indices) == list(range(len(STRATA)))  # every query exactly once
    sizes = [len(fold) for fold in folds]
    assert max(sizes) - min(sizes) <= 1


def test_each_kind_is_spread_evenly_over_the_folds() -> None:
    for fold in stratified_folds(STRATA, 5, seed=0):
        kinds = Counter(STRATA[i] for i in fold)
        assert 7 <= kinds["paraphrase"] <= 8 and kinds["keyword"] == 3
        assert 1 <= kinds["filtered"] <= 2


def test_folds_depend_on_the_seed_only() -> None:
    assert stratified_folds(STRATA, 5, 7) == stratified_folds(STRATA, 5, 7)
    assert stratified_folds(STRATA, 5, 7) != stratified_folds(STRATA, 5, 8)


@pytest.mark.parametrize("k", [0, 1, 61])
def test_fold_count_outside_2_to_n_is_refused(k: int) -> None:
    with pytest.raises(ValueError, match="folds"):
        stratified_folds(STRATA, k, seed=0)


def test_choose_takes_the_best_mean_and_the_earlier_setting_on_a_tie() -> None:
    scores = {"A": [1.0, 0.0], "B": [0.0, 1.0], "C": [0.0, 2.0]}
    assert choose(scores, [0]) == "A"
    assert choose(scores, [1]) == "C"
    assert choose(scores, [0, 1]) == "C"
    assert choose({"A": [0.5], "B": [0.5]}, [0]) == "A"


# A is only good on queries 0-1 (and a little on 5); B on queries 2-5. On all six queries A
# wins (2.1 / 6 against 2 / 6), so a procedure that peeked at the held-out fold would pick A.
SCORES = {
    "A": [1.0, 1.0, 0.0, 0.0, 0.0, 0.1],
    "B": [0.0, 0.0, 0.5, 0.5, 0.5, 0.5],
}
FOLDS = [[0, 1], [2, 3], [4, 5]]


def test_each_fold_is_scored_by_the_setting_chosen_on_the_other_folds() -> None:
    result = cross_validate(SCORES, FOLDS)
    # fold {0,1}: trained on 2-5, B wins; fold {2,3}: trained on 0,1,4,5, A wins (2.1 / 4);
    # fold {4,5}: trained on 0-3, A and B tie at 0.5, the earlier (A) is taken.
    assert result.choices == ["B", "A", "A"]
    assert result.held_out == [0.0, 0.0, 0.0, 0.0, 0.0, 0.1]
    assert result.fold_means == pytest.approx([0.0, 0.0, 0.05])
    assert result.mean == pytest.approx(0.1 / 6)
    # Far below the best setting's in-sample mean: the held-out fold never chose for itself.
    assert result.mean < max(sum(v) / 6 for v in SCORES.values())


def test_a_held_out_fold_cannot_change_its_own_choice() -> None:
    before = cross_validate(SCORES, FOLDS)
    # Make A perfect on fold {0,1} only: that fold's choice is made without it, so stays B.
    boosted = {"A": [9.0, 9.0, *SCORES["A"][2:]], "B": SCORES["B"]}
    after = cross_validate(boosted, FOLDS)
    assert after.choices[0] == before.choices[0] == "B"
    assert after.held_out[:2] == before.held_out[:2]


def test_repeated_cv_of_a_single_setting_is_its_plain_mean() -> None:
    scores = {"only": [1.0, 0.5, 0.0, 1.0, 0.25, 0.5]}
    result = repeated_cross_validation(scores, ["a", "b"] * 3, k=3, repeats=4, seed=1)
    assert result.mean == pytest.approx(sum(scores["only"]) / 6)
    assert result.held_out == pytest.approx(scores["only"])
    assert result.choices == {"only": 12}


def test_repeated_cross_validation_keeps_every_fold_mean_for_the_spread() -> None:
    scores = {"a": [1.0, 0.0, 1.0, 0.0, 1.0, 1.0], "b": [0.0, 1.0, 0.0, 1.0, 0.0, 0.0]}
    cv = repeated_cross_validation(scores, ["x"] * 6, k=3, repeats=4, seed=0)
    assert len(cv.fold_means) == 12
    assert cv.low == min(cv.fold_means) <= cv.median <= cv.high == max(cv.fold_means)

"""k-fold cross-validation over queries: a parameter chosen on k-1 folds, scored on the last.

Each candidate setting has one score per query (e.g. its reciprocal rank at 10). For every
fold the setting with the best mean on the other folds is chosen, and the held-out queries
are scored with it; each query is thus scored once, by a setting chosen without it. The
mean of those held-out scores estimates how the *selection procedure* does on new queries
(Hastie, Tibshirani and Friedman, The Elements of Statistical Learning, section 7.10).
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def stratified_folds(strata: Sequence[str], k: int, seed: int) -> list[list[int]]:
    """Indices 0..n-1 in `k` disjoint folds that together cover all, sizes differing by <= 1.

    Each stratum (e.g. query kind) is shuffled with `seed` and dealt round-robin, so every
    fold gets its share of each kind. Raises ValueError when k < 2 or k > n.
    """
    if not 2 <= k <= len(strata):
        raise ValueError(f"folds must be between 2 and the number of queries ({len(strata)})")
    rng = random.Random(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    dealt = 0
    for stratum in sorted(set(strata)):
        members = [i for i, s in enumerate(strata) if s == stratum]
        rng.shuffle(members)
        for index in members:
            folds[dealt % k].append(index)
            dealt += 1
    return [sorted(fold) for fold in folds]


def choose(scores: Mapping[str, Sequence[float]], indices: Sequence[int]) -> str:
    """The setting with the best mean score over `indices`; ties go to the earlier setting."""
    best, best_mean = "", float("-inf")
    for label, values in scores.items():
        mean = statistics.fmean(values[i] for i in indices)
        if mean > best_mean:
            best, best_mean = label, mean
    return best


@dataclass(frozen=True, slots=True)
class CrossValidation:
    """One k-fold run: each query's held-out score and the setting each fold chose."""

    held_out: list[float]
    choices: list[str]
    fold_means: list[float]

    @property
    def mean(self) -> float:
        """Mean held-out score over all queries."""
        return statistics.fmean(self.held_out)


def cross_validate(
    scores: Mapping[str, Sequence[float]], folds: Sequence[Sequence[int]]
) -> CrossValidation:
    """Per fold: choose on the other folds' queries, score the fold's queries with that choice.

    `scores` maps each setting (in preference order for ties) to one score per query.
    """
    count = len(next(iter(scores.values())))
    held_out = [0.0] * count
    choices, fold_means = [], []
    for fold in folds:
        outside = set(fold)
        training = [i for i in range(count) if i not in outside]
        chosen = choose(scores, training)
        choices.append(chosen)
        for i in fold:
            held_out[i] = scores[chosen][i]
        fold_means.append(statistics.fmean(held_out[i] for i in fold))
    return CrossValidation(held_out, choices, fold_means)


@dataclass(frozen=True, slots=True)
class RepeatedCrossValidation:
    """`repeats` k-fold runs with different shuffles, summarised.

    `mean`: mean held-out score (over queries, then repeats); `std`: standard deviation of
    the fold means over every fold of every repeat; `held_out`: each query's held-out score
    averaged over repeats; `choices`: how often each setting was chosen over all folds;
    `fold_means`: every fold's held-out mean (k x repeats values), whose spread (`low`,
    `median`, `high`) says how much one unlucky set of unseen queries can cost: a change is
    kept when it raises the low end, not only the mean.
    """

    mean: float
    std: float
    held_out: list[float]
    choices: Counter[str]
    fold_means: list[float] = field(default_factory=list)

    @property
    def low(self) -> float:
        """The worst fold's held-out mean."""
        return min(self.fold_means)

    @property
    def median(self) -> float:
        """The median fold's held-out mean."""
        return statistics.median(self.fold_means)

    @property
    def high(self) -> float:
        """The best fold's held-out mean."""
        return max(self.fold_means)


def repeated_cross_validation(
    scores: Mapping[str, Sequence[float]],
    strata: Sequence[str],
    k: int = 5,
    repeats: int = 5,
    seed: int = 0,
) -> RepeatedCrossValidation:
    """`cross_validate` over `repeats` stratified fold splits (seeds `seed`, `seed` + 1, ...)."""
    runs = [cross_validate(scores, stratified_folds(strata, k, seed + r)) for r in range(repeats)]
    fold_means = [m for run in runs for m in run.fold_means]
    return RepeatedCrossValidation(
        mean=statistics.fmean(run.mean for run in runs),
        std=statistics.pstdev(fold_means),
        held_out=[
            statistics.fmean(values) for values in zip(*(r.held_out for r in runs), strict=True)
        ],
        choices=Counter(choice for run in runs for choice in run.choices),
        fold_means=fold_means,
    )

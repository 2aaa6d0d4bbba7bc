"""The cosine distance that separates a relevant best hit from noise, measured on queries.

Two samples of best-hit (top-1 semantic) distances: labelled queries whose best hit is
relevant ("answered"), and off-topic queries that nothing in the corpus answers. When
the samples separate, the threshold is the midpoint of the gap between them; when they
overlap, it is the cut that maximises Youden's J (true positive rate - false positive
rate; Youden, Cancer 1950), ties to the smaller cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

#: Decimal places of the chosen threshold.
THRESHOLD_DECIMALS = 2


@dataclass(frozen=True, slots=True)
class DistanceThreshold:
    """The chosen cut and how it does on both samples (cosine distances in [0, 2]).

    `answered_kept`: share of answered queries whose best hit is within the cut;
    `off_topic_kept`: share of off-topic queries whose best hit is within it (noise let in);
    `separated`: whether every answered distance is below every off-topic one.
    """

    threshold: float
    answered: tuple[float, ...]
    off_topic: tuple[float, ...]
    answered_kept: float
    off_topic_kept: float
    separated: bool


def _share_within(values: Sequence[float], cut: float) -> float:
    return sum(1 for v in values if v <= cut) / len(values) if values else 0.0


def choose_threshold(answered: Sequence[float], off_topic: Sequence[float]) -> DistanceThreshold:
    """The distance cut between the two samples (rule in the module docstring).

    Raises ValueError when either sample is empty.
    """
    if not answered or not off_topic:
        raise ValueError("both samples need at least one distance")
    separated = max(answered) < min(off_topic)
    if separated:
        cut = (max(answered) + min(off_topic)) / 2
    else:
        values = sorted({*answered, *off_topic})
        cuts = [(a + b) / 2 for a, b in pairwise(values)] or values

        def youden(c: float) -> float:
            return _share_within(answered, c) - _share_within(off_topic, c)

        cut = max(cuts, key=lambda c: (youden(c), -c))
    cut = round(cut, THRESHOLD_DECIMALS)
    return DistanceThreshold(
        threshold=cut,
        answered=tuple(sorted(answered)),
        off_topic=tuple(sorted(off_topic)),
        answered_kept=_share_within(answered, cut),
        off_topic_kept=_share_within(off_topic, cut),
        separated=separated,
    )


def load_off_topic(text: str) -> list[str]:
    """Queries of an off-topic file: one a line, blank and `#` comment lines skipped."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]

"""The weights of the structural similarity score, validated to sum to 1."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: How far the weights may sum from 1 before start-up fails (float rounding in a config file).
SUM_TOLERANCE = 1e-9

Weight = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class SimilarityWeights(BaseModel):
    """Weight of each score component: each a finite number in [0, 1], all three summing to 1.

    Setting `similarity_weights` (env CSTP_SIMILARITY_WEIGHTS, JSON
    `{"tags": 0.6, "category": 0.25, "stakes": 0.15}`). All three keys are required, so a
    partial object fails rather than mixing with the defaults. Raises pydantic.ValidationError
    when a weight is missing, unknown, not a number, out of range, or the sum is off by more
    than SUM_TOLERANCE.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    tags: Weight
    category: Weight
    stakes: Weight

    @model_validator(mode="after")
    def _sum_is_one(self) -> Self:
        total = self.tags + self.category + self.stakes
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise ValueError(f"weights sum to {total:.12g}; they must sum to 1")
        return self


#: The structural-similarity spike's weights (shared/seeds/000): Jaccard over the affected
#: set 0.60, kind match 0.25, magnitude match 0.15.
DEFAULT_WEIGHTS = SimilarityWeights(tags=0.60, category=0.25, stakes=0.15)

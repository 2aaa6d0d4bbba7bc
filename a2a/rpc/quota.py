"""One limit's state after a call was counted against it (what an Admission returns)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from limits import RateLimitItem


@dataclass(frozen=True, slots=True)
class Quota:
    """One limit's state right after a call was counted against it.

    `remaining` calls left in the window; `reset_at` epoch seconds (UTC) when the oldest
    counted call leaves the moving window; `refused` when this limit turned the call away.
    """

    limit: RateLimitItem
    remaining: int
    reset_at: float
    refused: bool

    def retry_after(self, now: float) -> int:
        """Whole seconds until a call would be admitted again, at least 1."""
        return max(1, math.ceil(self.reset_at - now))

"""The HTTP rate-limit headers of a /cstp response: Retry-After and X-RateLimit-*."""

from __future__ import annotations

import math
from collections.abc import Sequence

from a2a.rpc import protocol
from a2a.rpc.pipeline import Outcome

#: Codes whose `data.retryAfter` a `Retry-After` header repeats.
_RETRY_CODES = (protocol.RATE_LIMITED, protocol.SATURATED)


def rate_limit_headers(outcomes: Sequence[Outcome]) -> dict[str, str]:
    """Headers for a reply, from its calls' outcomes and the quotas they used.

    `Retry-After` (whole seconds, the longest of the calls') when every call was limited
    or refused as saturated (CONTRACT.md section Errors specific to CSTP). For a response to
    a single call, `X-RateLimit-Limit`, `-Remaining` and `-Reset` (epoch seconds, as slowapi
    and GitHub send it) of the limit that refused the call, else of the limit with the
    fewest calls left.
    """
    headers = {}
    if outcomes and all(o.code in _RETRY_CODES for o in outcomes):
        headers["Retry-After"] = str(max(o.retry_after or 1 for o in outcomes))
    quotas = [quota for outcome in outcomes for quota in outcome.quotas]
    if len(outcomes) == 1 and quotas:
        refused = [quota for quota in quotas if quota.refused]
        quota = refused[0] if refused else min(quotas, key=lambda q: q.remaining)
        headers["X-RateLimit-Limit"] = str(quota.limit.amount)
        headers["X-RateLimit-Remaining"] = str(quota.remaining)
        headers["X-RateLimit-Reset"] = str(math.ceil(quota.reset_at))
    return headers

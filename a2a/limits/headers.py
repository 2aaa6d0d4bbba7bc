"""The HTTP rate-limit headers of a /cstp response: Retry-After and X-RateLimit-*."""

from __future__ import annotations

import math

from a2a.limits.admission import Quota
from a2a.rpc import protocol
from a2a.rpc.dispatcher import Reply


def rate_limit_headers(reply: Reply, quotas: list[Quota]) -> dict[str, str]:
    """Headers for a reply, from its calls' outcomes and the quotas they were counted against.

    `Retry-After` (whole seconds, the longest of the calls') when every call was limited
    (CONTRACT.md section Errors specific to CSTP). For a response to a single call,
    `X-RateLimit-Limit`, `-Remaining` and `-Reset` (epoch seconds, as slowapi and GitHub send
    it) of the limit that refused the call, else of the limit with the fewest calls left.
    """
    headers = {}
    outcomes = reply.outcomes
    if outcomes and all(o.code == protocol.RATE_LIMITED for o in outcomes):
        headers["Retry-After"] = str(max(o.retry_after or 1 for o in outcomes))
    if len(outcomes) == 1 and quotas:
        refused = [quota for quota in quotas if quota.refused]
        quota = refused[0] if refused else min(quotas, key=lambda q: q.remaining)
        headers["X-RateLimit-Limit"] = str(quota.limit.amount)
        headers["X-RateLimit-Remaining"] = str(quota.remaining)
        headers["X-RateLimit-Reset"] = str(math.ceil(quota.reset_at))
    return headers

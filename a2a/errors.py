"""Domain errors that callers can cause; they know nothing of JSON-RPC or HTTP.

`a2a.rpc.errors.to_error_object` is the one place that turns them into wire errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from a2a.store.errors import StoreUnavailable


@dataclass(frozen=True, slots=True)
class FieldError:
    """One bad input: dotted path (`filters.minConfidence`, `filters.stakes[1]`) and why."""

    field: str
    reason: str


class InvalidParams(Exception):
    """The call's params break the method's rules (JSON-RPC -32602); every bad field listed."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.reason}" for e in errors))
        self.errors = errors


class RateLimited(Exception):
    """The calling agent is over its limit (CSTP -32002); retry after `retry_after` seconds."""

    def __init__(self, retry_after: int, limit: str = "", quotas: Sequence[Any] = ()) -> None:
        super().__init__(f"rate limit {limit} exceeded; retry after {retry_after} s")
        self.retry_after = max(1, retry_after)
        self.limit = limit
        #: The `a2a.rpc.quota.Quota` of each limit the call was counted against.
        self.quotas = tuple(quotas)


class Unauthorized(Exception):
    """No valid bearer token (CSTP -32001, HTTP 401)."""


class MissingScope(Exception):
    """The caller's token lacks the scope the method needs (CSTP -32004, `requiredScope`)."""

    def __init__(self, required: str) -> None:
        super().__init__(f"this method needs a token with scope {required!r}")
        self.required = required


class TenantNotGranted(Exception):
    """The caller's token does not grant the tenant a call names, whether or not it exists
    (CSTP -32004, `requiredTenant`; CONTRACT.md, Tenants)."""

    def __init__(self, tenant: str) -> None:
        super().__init__("this token does not grant the tenant the call names")
        self.tenant = tenant


__all__ = [
    "FieldError",
    "InvalidParams",
    "MissingScope",
    "RateLimited",
    "StoreUnavailable",
    "TenantNotGranted",
    "Unauthorized",
]

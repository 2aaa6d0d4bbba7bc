"""Domain errors that callers can cause; they know nothing of JSON-RPC or HTTP.

`a2a.rpc.errors.to_error_object` is the one place that turns them into wire errors.
"""

from __future__ import annotations

from dataclasses import dataclass

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

    def __init__(self, retry_after: int, limit: str = "") -> None:
        super().__init__(f"rate limit {limit} exceeded; retry after {retry_after} s")
        self.retry_after = max(1, retry_after)
        self.limit = limit


class Unauthorized(Exception):
    """No valid bearer token (CSTP -32001, HTTP 401)."""


__all__ = ["FieldError", "InvalidParams", "RateLimited", "StoreUnavailable", "Unauthorized"]

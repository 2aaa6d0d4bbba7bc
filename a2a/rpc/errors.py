"""The one boundary where exceptions become JSON-RPC error objects."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from a2a.errors import InvalidParams, MissingScope, RateLimited, TenantNotGranted, Unauthorized
from a2a.rpc import protocol
from a2a.store.errors import EmbeddingModelMismatch, StoreUnavailable
from a2a.workers import Saturated

log = logging.getLogger(__name__)


class MethodNotFound(Exception):
    """No method of that name (case-sensitive) is served (-32601)."""


@dataclass(frozen=True, slots=True)
class ErrorObject:
    """A JSON-RPC error object before it is put on the wire."""

    code: int
    message: str
    data: Any = None


def to_error_object(exc: BaseException) -> ErrorObject:
    """The error object for `exc`; unexpected exceptions are -32603, logged, never described.

    Codes: -32601 MethodNotFound, -32602 InvalidParams (`data.errors`), -32001 Unauthorized,
    -32002 RateLimited (`data.retryAfter`, seconds), -32003 StoreUnavailable
    (`data.retryable`, and `data.reason` when it has one: "disk full"), -32004 MissingScope
    (`data.requiredScope`) and TenantNotGranted (`data.requiredTenant`), -32005 Saturated
    (`data.retryable`, `data.retryAfter`); CONTRACT.md sections Errors specific to CSTP and
    Errors added with the write path. Anything else is a fault of ours: -32603, logged with
    its traceback, nothing of it on the wire.
    """
    if isinstance(exc, MethodNotFound):
        # The name is the client's own: echo enough to recognise it, not a 500 KB string.
        return ErrorObject(
            protocol.METHOD_NOT_FOUND, "Method not found", {"method": str(exc)[:100]}
        )
    if isinstance(exc, InvalidParams):
        errors = [{"field": e.field, "reason": e.reason} for e in exc.errors]
        return ErrorObject(protocol.INVALID_PARAMS, "Invalid params", {"errors": errors})
    if isinstance(exc, RateLimited):
        return ErrorObject(protocol.RATE_LIMITED, "Rate limited", {"retryAfter": exc.retry_after})
    if isinstance(exc, StoreUnavailable):
        data: dict[str, Any] = {"retryable": True}
        if exc.reason is not None:
            data["reason"] = exc.reason
        return ErrorObject(protocol.STORE_UNAVAILABLE, "ChromaDB unavailable", data)
    if isinstance(exc, EmbeddingModelMismatch):
        # Retrying cannot help: an operator must fix the configuration.
        log.error("%s", exc)
        return ErrorObject(
            protocol.STORE_UNAVAILABLE,
            "ChromaDB collection unusable: embedding model mismatch",
            {"retryable": False},
        )
    if isinstance(exc, MissingScope):
        return ErrorObject(protocol.FORBIDDEN, "Forbidden", {"requiredScope": exc.required})
    if isinstance(exc, TenantNotGranted):
        return ErrorObject(protocol.FORBIDDEN, "Forbidden", {"requiredTenant": exc.tenant})
    if isinstance(exc, Saturated):
        return ErrorObject(
            protocol.SATURATED,
            "Service saturated",
            {"retryable": True, "retryAfter": exc.retry_after},
        )
    if isinstance(exc, Unauthorized):
        return ErrorObject(protocol.UNAUTHORIZED, "Unauthorized")
    log.error("internal error", exc_info=exc)
    return ErrorObject(protocol.INTERNAL_ERROR, "Internal error")

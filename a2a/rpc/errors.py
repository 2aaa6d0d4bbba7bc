"""The one boundary where exceptions become JSON-RPC error objects."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from a2a.errors import CallError, EmbeddingModelMismatch, StoreUnavailable
from a2a.rpc import protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ErrorObject:
    """A JSON-RPC error object before it is put on the wire."""

    code: int
    message: str
    data: Any = None


def to_error_object(exc: BaseException) -> ErrorObject:
    """The error object for `exc`; unexpected exceptions are -32603, logged, never described.

    A CallError (a2a.errors) carries its own code, message and data (CONTRACT.md sections
    Errors specific to CSTP and Errors added with the write path). EmbeddingModelMismatch,
    a fault of ours, is -32003 with `data.retryable` false, logged. Anything else is a fault
    of ours: -32603, logged with its traceback, nothing of it on the wire.
    """
    if isinstance(exc, CallError):
        return ErrorObject(exc.code, exc.message, exc.data)
    if isinstance(exc, EmbeddingModelMismatch):
        # Retrying cannot help: an operator must fix the configuration.
        log.error("%s", exc)
        return ErrorObject(
            StoreUnavailable.code,
            "ChromaDB collection unusable: embedding model mismatch",
            {"retryable": False},
        )
    log.error("internal error", exc_info=exc)
    return ErrorObject(protocol.INTERNAL_ERROR, "Internal error")

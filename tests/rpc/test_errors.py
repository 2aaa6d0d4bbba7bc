"""a2a/rpc/errors.py: the error object each exception becomes (CONTRACT.md, Errors)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a.errors import (
    BodyTooLarge,
    DiskFull,
    EmbeddingModelMismatch,
    FieldError,
    InvalidParams,
    InvalidRequest,
    LockedElsewhere,
    MethodNotFound,
    MissingScope,
    ParseError,
    RateLimited,
    Saturated,
    SettingsError,
    StoreLocked,
    StoreUnavailable,
    TenantNotGranted,
    Unauthorized,
)
from a2a.rpc.errors import to_error_object


@pytest.mark.parametrize(
    ("exc", "code", "data"),
    [
        (ParseError("body is not valid JSON"), -32700, {"reason": "body is not valid JSON"}),
        (InvalidRequest("no method", 7), -32600, {"reason": "no method"}),
        (BodyTooLarge(), -32600, None),
        (MethodNotFound("x" * 300), -32601, {"method": "x" * 100}),
        (
            InvalidParams([FieldError("limit", "too big"), FieldError("filters.stakes[1]", "bad")]),
            -32602,
            {
                "errors": [
                    {"field": "limit", "reason": "too big"},
                    {"field": "filters.stakes[1]", "reason": "bad"},
                ]
            },
        ),
        (Unauthorized(), -32001, None),
        (RateLimited(0, "60/minute"), -32002, {"retryAfter": 1}),
        (StoreUnavailable("timed out"), -32003, {"retryable": True}),
        (DiskFull("12 MiB free"), -32003, {"retryable": True, "reason": "disk full"}),
        (EmbeddingModelMismatch("c", "minilm", "wordllama"), -32003, {"retryable": False}),
        (MissingScope("write"), -32004, {"requiredScope": "write"}),
        (TenantNotGranted("acme"), -32004, {"requiredTenant": "acme"}),
        (Saturated(3), -32005, {"retryable": True, "retryAfter": 3}),
        (LockedElsewhere(2), -32005, {"retryable": True, "retryAfter": 2}),
        (StoreLocked("held by pid 7"), -32603, None),
        (SettingsError("CSTP_PORT: not a port"), -32603, None),
        (KeyError("a bug"), -32603, None),
    ],
    ids=[
        "parse",
        "invalid-request",
        "body-too-large",
        "method-not-found-name-cut",
        "invalid-params-every-field",
        "unauthorized",
        "rate-limited-at-least-1s",
        "store-unavailable",
        "disk-full-reason",
        "model-mismatch-not-retryable",
        "missing-scope",
        "tenant-not-granted",
        "saturated",
        "locked-elsewhere-is-saturated",
        "service-fault-is-internal",
        "settings-fault-is-internal",
        "bug-is-internal",
    ],
)
def test_each_exception_becomes_its_contract_error_object(
    exc: Exception, code: int, data: Any
) -> None:
    error = to_error_object(exc)
    assert (error.code, error.data) == (code, data)

"""The dispatcher's error boundary, with a method table of its own."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import BaseModel

from a2a.errors import RateLimited
from a2a.rpc.dispatcher import Dispatcher
from a2a.rpc.methods import CallContext, Method
from a2a.store import StoreUnavailable


class Empty(BaseModel):
    pass


async def boom(params: Empty, ctx: CallContext) -> None:
    raise KeyError("secret internal detail /etc/passwd")


async def store_down(params: Empty, ctx: CallContext) -> None:
    raise StoreUnavailable("connection refused at 10.0.0.1")


class DenyAll:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def admit(self, method: str, ctx: CallContext) -> None:
        self.calls.append(method)
        raise RateLimited(retry_after=0)


METHODS = {
    "boom": Method("boom", Empty, boom),
    "down": Method("down", Empty, store_down),
}
CTX = CallContext(agent="a")


async def _one(dispatcher: Dispatcher, method: str) -> dict[str, object]:
    body = json.dumps({"jsonrpc": "2.0", "method": method, "id": 1}).encode()
    reply = await dispatcher.dispatch(body, CTX)
    assert isinstance(reply.body, dict)
    return reply.body


async def test_unexpected_fault_is_internal_error_without_details(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        body = await _one(Dispatcher(METHODS), "boom")
    assert body == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert "secret internal detail" in caplog.text  # logged for the operator, not sent


async def test_store_failure_is_32003_and_retryable() -> None:
    error = (await _one(Dispatcher(METHODS), "down"))["error"]
    assert error == {"code": -32003, "message": error["message"], "data": {"retryable": True}}  # type: ignore[index]
    assert "10.0.0.1" not in json.dumps(error)


async def test_rate_limit_step_runs_after_params_and_before_the_call() -> None:
    admission = DenyAll()
    body = await _one(Dispatcher(METHODS, admission=admission), "boom")
    assert body["error"] == {"code": -32002, "message": "Rate limited", "data": {"retryAfter": 1}}
    assert admission.calls == ["boom"]
    unknown = await _one(Dispatcher(METHODS, admission=admission), "nope")
    assert unknown["error"]["code"] == -32601  # type: ignore[index]
    assert admission.calls == ["boom"]

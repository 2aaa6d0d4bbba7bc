"""The dispatcher's error boundary, with a method table of its own."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import BaseModel

from a2a.errors import RateLimited, StoreUnavailable
from a2a.rpc.dispatcher import Dispatcher
from a2a.rpc.methods import CallContext, Method
from a2a.rpc.pipeline import Pipeline


class Empty(BaseModel):
    pass


async def boom(params: Empty, ctx: CallContext) -> None:
    raise KeyError("secret internal detail /etc/passwd")


async def store_down(params: Empty, ctx: CallContext) -> None:
    raise StoreUnavailable("connection refused at 10.0.0.1")


class DenyAll:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def admit(self, method: str, ctx: CallContext, cost: int = 1) -> list[object]:
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
        body = await _one(Dispatcher(Pipeline(METHODS)), "boom")
    assert body == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert "secret internal detail" in caplog.text  # logged for the operator, not sent


async def test_store_failure_is_32003_and_retryable() -> None:
    error = (await _one(Dispatcher(Pipeline(METHODS)), "down"))["error"]
    assert error == {"code": -32003, "message": error["message"], "data": {"retryable": True}}  # type: ignore[index]
    assert "10.0.0.1" not in json.dumps(error)


async def test_rate_limit_step_runs_first_for_every_call_known_or_not() -> None:
    admission = DenyAll()
    body = await _one(Dispatcher(Pipeline(METHODS, admission)), "boom")
    assert body["error"] == {"code": -32002, "message": "Rate limited", "data": {"retryAfter": 1}}
    assert admission.calls == ["boom"]
    # CONTRACT.md section Rate limiting: an unknown method counts too, before -32601.
    unknown = await _one(Dispatcher(Pipeline(METHODS, admission)), "nope")
    assert unknown["error"]["code"] == -32002  # type: ignore[index]
    assert admission.calls == ["boom", "nope"]

"""One deadline per JSON-RPC call for all of its waits on Chroma (CONTRACT.md, Deadlines).

A call may wait on Chroma several times in a row (a write: a read, the write, a read-back;
an update: several reads, then the write). Each wait used to get the whole Chroma timeout,
so a frozen Chroma held a call for a multiple of it. Now `call_deadline()` opens one scope
per call (a2a.rpc.pipeline.Pipeline.call); the first wait on Chroma inside it fixes the
call's deadline at that moment + the Chroma timeout, and every later wait of the same call
ends by that deadline (`chroma_wait`, used by a2a.store.AsyncStore). Time before the first
wait (admission, validation, a query's embedding) is not Chroma's and does not count.

Outside a scope (scripts, background checks) each wait gets the whole timeout. Tasks
started inside a scope share it (contextvars are copied into them); work done for several
calls at once (a group commit's batch) opens a scope of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class _Scope:
    #: The call's deadline on the event loop's clock (loop.time()), once it first waited.
    deadline: float | None = None


_scope: ContextVar[_Scope | None] = ContextVar("cstp_chroma_deadline", default=None)


@contextmanager
def call_deadline() -> Iterator[None]:
    """The scope of one call (or one batch written for several): its waits on Chroma share
    one deadline, fixed by the first of them."""
    token = _scope.set(_Scope())
    try:
        yield
    finally:
        _scope.reset(token)


def seconds_left(timeout_seconds: float) -> float:
    """Seconds the current wait on Chroma may take (<= 0: the call's deadline has passed).

    Inside a scope, the first call fixes the deadline at now + `timeout_seconds`; outside,
    always `timeout_seconds`. Call it from the event loop.
    """
    scope = _scope.get()
    if scope is None:
        return timeout_seconds
    now = asyncio.get_running_loop().time()
    if scope.deadline is None:
        scope.deadline = now + timeout_seconds
    return scope.deadline - now

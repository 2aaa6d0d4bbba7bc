"""A bounded pool of worker threads for CPU-bound work off the event loop.

Placeholder with the interface the pipeline engineer's version keeps: `await pool.run(fn)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class WorkerPool:
    """At most `max_threads` calls run at once; the rest wait their turn.

    The wait does not count against any Chroma deadline: callers time Chroma calls alone.
    """

    def __init__(self, max_threads: int = 4) -> None:
        self._limiter = anyio.CapacityLimiter(max_threads)

    async def run(self, fn: Callable[[], T]) -> T:
        """`fn()` in a worker thread; its result or its exception."""
        return await anyio.to_thread.run_sync(fn, limiter=self._limiter)

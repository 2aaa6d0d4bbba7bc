"""A readers-writer lock: many concurrent readers or one writer, writers not starved."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    """Readers share the lock; a writer holds it alone. A waiting writer stops new readers
    from entering, so a stream of queries cannot starve an index refresh.
    """

    def __init__(self) -> None:
        # The condition's own lock, taken directly where nobody waits (a C-level `with`).
        self._mutex = threading.Lock()
        self._condition = threading.Condition(self._mutex)
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the lock as one of possibly many readers."""
        with self._condition:
            while self._writing or self._writers_waiting:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            self._leave()

    def try_reading(self) -> bool:
        """Enter as a reader only when no writer holds the lock or waits for it; returns
        whether it entered (then call `stop_reading()` once done). Never waits for a writer:
        a caller on an event loop must not block on an index refresh. Two plain calls, not
        a context manager: this is on every inline query's path (~1 us against ~4)."""
        with self._mutex:
            if self._writing or self._writers_waiting:
                return False
            self._readers += 1
            return True

    def stop_reading(self) -> None:
        """Leave as a reader (after `try_reading()` returned True)."""
        self._leave()

    def _leave(self) -> None:
        with self._mutex:
            self._readers -= 1
            # Only a writer waits for the readers to leave (readers wait for writers).
            if not self._readers and self._writers_waiting:
                self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the lock alone."""
        with self._condition:
            self._writers_waiting += 1
            while self._writing or self._readers:
                self._condition.wait()
            self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._condition:
                self._writing = False
                self._condition.notify_all()

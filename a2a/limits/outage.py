"""Outage: when a shared service (a Redis, a peer) has failed, skip it for a while instead
of waiting on it with every call, and try it again after 1, 2, 4 ... 30 seconds: the one
back-off of rate limits, locks, creation claims and peers' circuit breakers."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: Longest wait, in seconds, between two tries of a service that is down.
MAX_RETRY_SECONDS = 30.0


class Outage:
    """Whether `name` (a shared service, for the log) is taken as down, and when to try it.

    After a failure (`failed`) the service is skipped (`skip()` true) until its next try,
    1 s later, then 2, 4 ... `max_retry_seconds`: one caller makes the try and the others
    keep skipping meanwhile. A success (`succeeded`) ends the outage. A Redis that hangs
    costs one timeout a try, not one a call (reported: a hung Redis made each lock of a
    call wait its 1 s timeout in turn, 41 s for a decision with 40 links). Going down and
    coming back are each logged once. Thread-safe (the creation claims use it from the
    worker threads); it never blocks on more than its own few assignments.
    """

    def __init__(
        self,
        name: str,
        clock: Callable[[], float] = time.monotonic,
        restored: str = "",
        max_retry_seconds: float = MAX_RETRY_SECONDS,
        threshold: int = 1,
    ) -> None:
        """`restored`: what the log line of the service coming back adds.
        `max_retry_seconds`: the longest wait between tries (how long a caller may go on
        without the service after it is back). `threshold`: failures in a row that make
        an outage (a circuit breaker's, 3 for peers); a success in between starts over."""
        self._name = name
        self._threshold = threshold
        self._failures = 0
        self._clock = clock
        self._max_retry = max_retry_seconds
        self._restored = f"; {restored}" if restored else ""
        self._down = False
        self._interval = 0.0
        self._next_try = 0.0
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        """True from a failure until the next success."""
        return self._down

    @property
    def next_try_in(self) -> float:
        """Seconds until the next try while down (0 when due, or not down)."""
        return max(0.0, self._next_try - self._clock()) if self._down else 0.0

    def skip(self) -> bool:
        """True when the caller should not use the service now. While down, false once
        per retry interval: that caller's use is the try."""
        with self._lock:
            if not self._down:
                return False
            now = self._clock()
            if now < self._next_try:
                return True
            self._interval = min(self._interval * 2, self._max_retry)
            self._next_try = now + self._interval
            return False

    def failed(self, error: Exception, fallback: str) -> None:
        """A use failed: down until the next try. `fallback` says what callers do meanwhile
        (logged once, when the outage starts)."""
        with self._lock:
            self._failures += 1
            if self._down or self._failures < self._threshold:
                return
            self._down = True
            self._interval = 1.0
            self._next_try = self._clock() + self._interval
        log.warning("%s unreachable (%s); %s", self._name, error, fallback)

    def succeeded(self) -> None:
        """A use succeeded: the outage, if any, is over."""
        with self._lock:
            self._failures = 0
            if not self._down:
                return
            self._down = False
        log.warning("%s answers again%s", self._name, self._restored)

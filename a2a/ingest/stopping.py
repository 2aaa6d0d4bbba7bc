"""Stopping at a safe point: SIGINT/SIGTERM noted, acted on when the current step is done."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals a long command (`cstp index`) stops on.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Whether, and by which signal, the process was asked to stop."""

    def __init__(self) -> None:
        self.signal: signal.Signals | None = None

    def is_set(self) -> bool:
        """True once a stop signal arrived."""
        return self.signal is not None

    @property
    def exit_code(self) -> int:
        """The shell convention for death by signal: 128 + number (130 SIGINT, 143 SIGTERM)."""
        return 0 if self.signal is None else 128 + int(self.signal)


@contextmanager
def stop_on_signals(
    on_signal: Callable[[signal.Signals], None] | None = None,
) -> Iterator[StopRequest]:
    """Within the block, SIGINT and SIGTERM only set the yielded StopRequest.

    `on_signal(sig)` is called for the first one (to say the process is stopping). The
    previous handlers are restored on exit. Must run in the main thread (Python's rule for
    signal handlers); the handler only sets a flag, so it is safe while Chroma writes.
    """
    request = StopRequest()

    def handle(number: int, frame: FrameType | None) -> None:
        first = request.signal is None
        request.signal = request.signal or signal.Signals(number)
        if first and on_signal is not None:
            on_signal(request.signal)

    previous = {sig: signal.signal(sig, handle) for sig in STOP_SIGNALS}
    try:
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

"""Stopping at a safe point: SIGINT/SIGTERM noted, acted on when the current step is done;
a second one ends the process at once."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

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
    on_second: Callable[[signal.Signals], None] | None = None,
) -> Iterator[StopRequest]:
    """Within the block, SIGINT and SIGTERM only set the yielded StopRequest.

    `on_signal(sig)` is called for the first one (to say the process is stopping), and
    `on_second(sig)` for each later one (`cstp index`: exit at once, `exit_now`). The
    previous handlers are restored on exit. Must run in the main thread (Python's rule for
    signal handlers), where a handler runs between two bytecodes: never inside a call into
    Chroma's bindings, which holds the GIL until it returns.
    """
    request = StopRequest()

    def handle(number: int, frame: FrameType | None) -> None:
        if request.signal is not None:
            if on_second is not None:
                on_second(signal.Signals(number))
            return
        request.signal = signal.Signals(number)
        if on_signal is not None:
            on_signal(request.signal)

    previous = {sig: signal.signal(sig, handle) for sig in STOP_SIGNALS}
    try:
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_now(code: int) -> NoReturn:
    """End the process with `code` now, without waiting for its other threads.

    For a stopped `cstp index`, whose model may still be embedding a chunk nobody will
    store: a model call on a thread cannot be interrupted, and the interpreter's exit would
    wait for its worker threads (minutes, for a batch of ADRs). Logs and stdio are flushed
    first; atexit handlers do not run, so close the store before.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken pipe
            stream.flush()
    os._exit(code)

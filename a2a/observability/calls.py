"""Each JSON-RPC call's outcome into the metrics and one access-log line, whatever its door."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from a2a.observability.metrics import Metrics, code_label
from a2a.rpc.pipeline import Outcome

#: The logger of the one-line-per-call access log.
access_log = logging.getLogger("a2a.access")
#: Longest method name written to the log; the rest is cut (names are client-chosen).
MAX_LOGGED_METHOD = 100


def printable(text: str) -> str:
    """`text` with control characters escaped (`\\n`), so a client cannot forge log lines."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


class CallLog:
    """Counts calls in `metrics` (`Metrics.count_calls`) and logs each as one `a2a.access`
    line: `request_id`, `agent`, `door` (`cstp` or `mcp`), `method`, `code` (`ok` or the
    error code), `status` (HTTP) and `ms` (wall time of the HTTP request carrying the call,
    milliseconds; a batch's calls share it)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def record(
        self,
        outcomes: Sequence[Outcome],
        *,
        door: str,
        agent: str | None,
        request_id: str,
        status: int,
        seconds: float,
    ) -> None:
        """Count and log `outcomes`, the calls of one HTTP request."""
        self._metrics.count_calls(outcomes)
        # The fields are built only for a line that is written (not at CSTP_LOG_LEVEL=warning).
        if not access_log.isEnabledFor(logging.INFO):
            return
        for outcome in outcomes:
            method = outcome.method
            access_log.info(
                "call",
                extra={
                    "request_id": request_id,
                    "agent": agent,
                    "door": door,
                    "method": None if method is None else printable(method[:MAX_LOGGED_METHOD]),
                    "code": code_label(outcome.code),
                    "status": status,
                    "ms": round(seconds * 1000, 1),
                },
            )

"""Log set-up: one JSON object per line (for collectors) or plain text (for people)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["json", "text"]

#: Attributes every LogRecord has; anything else was passed in `extra=` and is logged too,
#: except uvicorn's `color_message` (the message again, with terminal colour codes).
_STANDARD_ATTRIBUTES = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON: `time` (RFC 3339 UTC, milliseconds), `level`, `logger`,
    `message`, every `extra=` field, and `exc_info` (the traceback text) when there is one.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRIBUTES and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`LEVEL logger: message`, then the `extra=` fields as `key=value` pairs."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extras = [
            f"{key}={value}"
            for key, value in record.__dict__.items()
            if key not in _STANDARD_ATTRIBUTES and not key.startswith("_")
        ]
        return " ".join([text, *extras]) if extras else text


def configure_logging(level: str, log_format: LogFormat) -> None:
    """Send every logger's records (uvicorn's included) to stderr in `log_format`.

    Replaces the root logger's handlers, so calling it again (a uvicorn worker process
    building its app) does not duplicate lines. `level` is a logging level name.
    """
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    # On the handler too: some libraries set their own loggers to DEBUG.
    handler.setLevel(level.upper())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # httpx logs every request Chroma's HTTP client makes at INFO, and faiss's loader each
    # CPU build it tries ("Could not load library with AVX512 support ...", read by a new
    # user as a broken install): noise, not events.
    for noisy in ("httpx", "faiss.loader"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))

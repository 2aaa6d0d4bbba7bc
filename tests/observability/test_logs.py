"""Log lines: one JSON object per record, or text with the extra fields as key=value."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from a2a.observability.logs import JsonFormatter, TextFormatter, configure_logging


def record(**extra: object) -> logging.LogRecord:
    rec = logging.LogRecord("a2a.access", logging.INFO, __file__, 1, "call %s", ("x",), None)
    rec.created = 1767225600.25  # 2026-01-01T00:00:00.250Z
    rec.__dict__.update(extra)
    return rec


def test_json_line_has_time_level_logger_message_and_every_extra_field() -> None:
    line = JsonFormatter().format(record(request_id="r1", agent="alice", code="ok", ms=1.5))
    assert "\n" not in line
    assert json.loads(line) == {
        "time": "2026-01-01T00:00:00.250Z",
        "level": "INFO",
        "logger": "a2a.access",
        "message": "call x",
        "request_id": "r1",
        "agent": "alice",
        "code": "ok",
        "ms": 1.5,
    }


def test_json_line_carries_the_traceback_of_an_exception() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        rec = record()
        rec.exc_info = sys.exc_info()
    entry = json.loads(JsonFormatter().format(rec))
    assert "ValueError: boom" in entry["exc_info"]


def test_uvicorns_colour_copy_of_the_message_is_left_out() -> None:
    entry = json.loads(JsonFormatter().format(record(color_message="\x1b[1mcall\x1b[0m")))
    assert "color_message" not in entry


def test_text_line_appends_extra_fields_as_pairs() -> None:
    line = TextFormatter().format(record(request_id="r1", code="-32602"))
    assert line == "INFO a2a.access: call x request_id=r1 code=-32602"


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_configuring_twice_leaves_one_handler(log_format: str) -> None:
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        configure_logging("warning", log_format)  # type: ignore[arg-type]
        configure_logging("warning", log_format)  # type: ignore[arg-type]
        assert len(root.handlers) == 1 and root.level == logging.WARNING
        assert root.handlers[0].level == logging.WARNING
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)


def test_library_noise_is_kept_below_info() -> None:
    # Reported by a new user: faiss's loader logged each CPU build it tried at INFO,
    # "Could not load library with AVX512 support due to: ModuleNotFoundError(...)".
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    noisy = [logging.getLogger(name) for name in ("httpx", "faiss.loader")]
    saved_levels = [logger.level for logger in noisy]
    try:
        configure_logging("info", "text")
        assert [logger.isEnabledFor(logging.INFO) for logger in noisy] == [False, False]
        assert all(logger.isEnabledFor(logging.WARNING) for logger in noisy)
        assert logging.getLogger("a2a.index.sync").isEnabledFor(logging.INFO)
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for logger, level in zip(noisy, saved_levels, strict=True):
            logger.setLevel(level)

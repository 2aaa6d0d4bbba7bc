"""Date-time bounds as CONTRACT.md reads them: RFC 3339 with offset, or a bare UTC day."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from typing import Literal

# RFC 3339 section 5.6 `date-time`; the offset is required (a naive time is ambiguous).
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_bound(text: str, side: Literal["after", "before"]) -> datetime:
    """The UTC instant a `dateAfter`/`dateBefore` string means.

    `YYYY-MM-DD` is the start of that UTC day for "after" and its last microsecond for
    "before" (both bounds inclusive). Raises ValueError for anything else, naive
    date-times included.
    """
    if _DATE.match(text):
        day = datetime.combine(_to_date(text), time(), tzinfo=UTC)
        return day if side == "after" else day + timedelta(days=1, microseconds=-1)
    if not _DATE_TIME.match(text):
        raise ValueError(
            "expected an RFC 3339 date-time with offset (2026-01-31T12:00:00Z) or a date "
            "(2026-01-31)"
        )
    normalised = text[:10] + "T" + text[11:].upper()
    try:
        return datetime.fromisoformat(normalised).astimezone(UTC)
    except ValueError:
        raise ValueError(f"{text!r} is not a real date-time") from None


def _to_date(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise ValueError(f"{text!r} is not a real date") from None

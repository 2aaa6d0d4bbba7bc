"""Date-times as CONTRACT.md reads them (RFC 3339, a bare UTC day) and writes them (`...Z`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from typing import Literal

# RFC 3339 section 5.6 `date-time`; the offset is required (a naive time is ambiguous).
# ASCII digits only: `\d` would also take other scripts' digits.
_DATE_TIME = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
    r"([Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_LATEST = datetime.max.replace(tzinfo=UTC)
_TICK = timedelta(microseconds=1)


def parse_bound(text: str, side: Literal["after", "before"]) -> datetime:
    """The UTC instant a `dateAfter`/`dateBefore` string means.

    `YYYY-MM-DD` is the start of that UTC day for "after" and its last microsecond for
    "before" (both bounds inclusive). Raises ValueError for anything else, naive
    date-times and instants outside the years 1-9999 in UTC included.
    """
    if _DATE.match(text):
        day = datetime.combine(_to_date(text), time(), tzinfo=UTC)
        if side == "after":
            return day
        return _LATEST if day.date() == _LATEST.date() else day + timedelta(days=1) - _TICK
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
    except OverflowError:  # 0001-01-01T00:00:00+01:00 falls before year 1 in UTC
        raise ValueError(f"{text!r} is outside the years 1-9999 in UTC") from None


def _to_date(text: str) -> datetime:
    try:
        return datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise ValueError(f"{text!r} is not a real date") from None


def format_date(value: datetime) -> str:
    """RFC 3339 in UTC with a `Z`, to the second: `2026-01-20T14:00:00Z`."""
    utc = value.astimezone(UTC)
    # strftime's %Y does not pad years below 1000 on every platform; RFC 3339 needs 4 digits.
    return f"{utc.year:04d}-{utc.strftime('%m-%dT%H:%M:%S')}Z"


def date_text(value: datetime | None) -> str | None:
    """`value` as RFC 3339 UTC text (format_date); None stays None."""
    return None if value is None else format_date(value)

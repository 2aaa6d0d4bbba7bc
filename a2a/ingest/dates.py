"""Date parsing for importers: loose dates found in Markdown and strict record dates."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from typing import Final

_MONTHS: Final[dict[str, int]] = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_MONTH_NAME: Final = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY: Final = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR: Final = r"(?P<year>\d{4})"

_ISO: Final = re.compile(r"(?<!\d)(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?!\d)")
_COMPACT: Final = re.compile(
    r"(?<!\d)(?P<year>(?:19|20)\d{2})(?P<month>[01]\d)(?P<day>[0-3]\d)(?!\d)"
)
_DAY_FIRST: Final = re.compile(
    r"(?<![\d/.])(?P<day>\d{1,2})(?P<sep>[/.])(?P<month>\d{1,2})(?P=sep)"
    r"(?P<year>\d{4}|\d{2})(?![\d/.])"
)
_DAY_MONTH_NAME: Final = re.compile(
    rf"(?<!\w){_DAY}\s+(?:of\s+)?{_MONTH_NAME},?\s+{_YEAR}(?!\d)", re.I
)
_MONTH_NAME_DAY: Final = re.compile(rf"(?<!\w){_MONTH_NAME}\s+{_DAY},?\s+{_YEAR}(?!\d)", re.I)

_PATTERNS: Final[tuple[re.Pattern[str], ...]] = (
    _ISO,
    _DAY_FIRST,
    _DAY_MONTH_NAME,
    _MONTH_NAME_DAY,
    _COMPACT,
)


def _utc_midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _month_number(text: str) -> int:
    return int(text) if text.isdigit() else _MONTHS[text.lower().rstrip(".")]


def _year_number(text: str) -> int:
    return 2000 + int(text) if len(text) == 2 else int(text)


def _from_match(match: re.Match[str]) -> datetime | None:
    try:
        day = date(_year_number(match["year"]), _month_number(match["month"]), int(match["day"]))
    except ValueError:
        return None
    return _utc_midnight(day)


def parse_loose_date(text: str) -> datetime | None:
    """The earliest-placed valid date written in `text`, as UTC midnight, or None.

    Accepts `YYYY-MM-DD`, day-first `DD/MM/YYYY` and `DD.MM.YYYY` (also with a two-digit year,
    read as 20YY), "2 March 2021", "2nd of March, 2021", "March 2, 2021" and `YYYYMMDD`.
    Impossible dates such as 31/02/2020 are skipped. Example: "Accepted (02/01/2020)" ->
    2020-01-02T00:00Z.
    """
    found: list[tuple[int, datetime]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            parsed = _from_match(match)
            if parsed is not None:
                found.append((match.start(), parsed))
                break
    return min(found, key=lambda item: item[0])[1] if found else None


def _from_string(text: str) -> datetime | None:
    stripped = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", stripped):
        try:
            return _utc_midnight(date.fromisoformat(stripped))
        except ValueError:
            return None
    try:
        return datetime.fromisoformat(stripped.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None


def _as_datetime(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return _utc_midnight(value)
    if isinstance(value, str):
        return _from_string(value)
    return None


def parse_record_date(value: object) -> tuple[datetime | None, str | None]:
    """A structured record's `date` as aware UTC, plus a warning or None.

    Accepts RFC 3339 strings with an offset, `YYYY-MM-DD` (UTC midnight), and the
    `datetime`/`date` objects YAML produces for timestamps. A naive datetime is read as UTC
    and gives a warning. None stays None. Raises ValueError for anything else.
    """
    if value is None:
        return None, None
    parsed = _as_datetime(value)
    if parsed is None:
        raise ValueError(f"not an RFC 3339 date or YYYY-MM-DD: {value!r}")
    if parsed.tzinfo is None:
        warning = f"date {parsed.isoformat()} has no UTC offset; read as UTC"
        return parsed.replace(tzinfo=UTC), warning
    try:
        return parsed.astimezone(UTC), None
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise ValueError(f"date {value!r} is outside the years 1-9999 in UTC") from None

"""Tests for loose Markdown dates and strict record dates."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from a2a.ingest.dates import parse_loose_date, parse_record_date


def _utc(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2019-02-01", _utc(2019, 2, 1), id="iso"),
        pytest.param("Date: 2024-10-31 :ghost:", _utc(2024, 10, 31), id="iso-with-trailing-emoji"),
        pytest.param("05/02/2018", _utc(2018, 2, 5), id="slashes-are-day-first"),
        pytest.param("24/9/21 Outstanding", _utc(2021, 9, 24), id="slashes-short-year"),
        pytest.param("03.05.2020", _utc(2020, 5, 3), id="dots-are-day-first"),
        pytest.param("2 March 2021", _utc(2021, 3, 2), id="day-month-name-year"),
        pytest.param("16th September, 2022", _utc(2022, 9, 16), id="ordinal-day-month-name"),
        pytest.param("March 2, 2021", _utc(2021, 3, 2), id="month-name-day-year"),
        pytest.param("Sept 30 2020", _utc(2020, 9, 30), id="abbreviated-month"),
        pytest.param("Introduced: 20220513", _utc(2022, 5, 13), id="compact"),
        pytest.param("Accepted (2020-01-02)", _utc(2020, 1, 2), id="next-to-status"),
    ],
)
def test_loose_dates_parse_to_utc_midnight(text: str, expected: datetime) -> None:
    assert parse_loose_date(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("2023-13-10", id="month-13"),
        pytest.param("31/02/2020", id="february-31"),
        pytest.param("30.02.2020", id="february-30-dots"),
        pytest.param("no date here", id="no-date"),
        pytest.param("", id="empty"),
        pytest.param("version 1.2.3", id="version-number"),
    ],
)
def test_impossible_or_missing_dates_give_none(text: str) -> None:
    assert parse_loose_date(text) is None


def test_the_earliest_written_date_wins() -> None:
    assert parse_loose_date("3 March 2020, revised 2021-01-01") == _utc(2020, 3, 3)


@pytest.mark.parametrize(
    ("value", "expected", "warns"),
    [
        pytest.param("2020-01-02", _utc(2020, 1, 2), False, id="date-only-string"),
        pytest.param(
            "2020-01-02T10:30:00Z", _utc(2020, 1, 2) + timedelta(hours=10.5), False, id="rfc3339-z"
        ),
        pytest.param(
            "2020-01-02T12:00:00+02:00",
            _utc(2020, 1, 2) + timedelta(hours=10),
            False,
            id="rfc3339-offset-converted",
        ),
        pytest.param(date(2020, 1, 2), _utc(2020, 1, 2), False, id="yaml-date"),
        pytest.param(
            datetime(2020, 1, 2, 8, tzinfo=timezone(timedelta(hours=-1))),
            _utc(2020, 1, 2) + timedelta(hours=9),
            False,
            id="aware-datetime",
        ),
        pytest.param(
            datetime(2020, 1, 2, 8),
            _utc(2020, 1, 2) + timedelta(hours=8),
            True,
            id="naive-datetime-is-utc",
        ),
        pytest.param(
            "2020-01-02T08:00:00",
            _utc(2020, 1, 2) + timedelta(hours=8),
            True,
            id="naive-string-is-utc",
        ),
        pytest.param(None, None, False, id="missing"),
    ],
)
def test_record_dates_become_aware_utc(
    value: object, expected: datetime | None, warns: bool
) -> None:
    parsed, warning = parse_record_date(value)
    assert parsed == expected
    assert (warning is not None) is warns
    if parsed is not None:
        assert parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("02/01/2020", id="slashes"),
        pytest.param("2020-02-30", id="impossible"),
        pytest.param("yesterday", id="words"),
        pytest.param(20200102, id="number"),
    ],
)
def test_record_dates_reject_anything_else(value: object) -> None:
    with pytest.raises(ValueError, match="RFC 3339"):
        parse_record_date(value)

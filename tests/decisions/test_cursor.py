"""listDecisions cursors: round trip, and every foreign or altered one refused on `cursor`."""

from __future__ import annotations

import pytest

from a2a.decisions.cursor import CursorCodec
from a2a.decisions.paging import Position
from a2a.errors import InvalidParams
from a2a.records.filters import QueryFilters

ARCH = QueryFilters.model_validate({"category": "architecture"})


@pytest.mark.parametrize("position", [Position(1.7e9, "dec-1"), Position(None, "ü/ x")])
def test_a_cursor_reads_back_as_its_position(position: Position) -> None:
    codec = CursorCodec(b"k" * 32)
    assert codec.decode(codec.encode(position, "dateDesc", ARCH), "dateDesc", ARCH) == position


def refused(codec: CursorCodec, cursor: str, order: str = "dateDesc", filters=ARCH) -> None:
    with pytest.raises(InvalidParams) as caught:
        codec.decode(cursor, order, filters)  # type: ignore[arg-type]
    assert [e.field for e in caught.value.errors] == ["cursor"]


def test_foreign_altered_and_mismatched_cursors_are_refused_on_cursor() -> None:
    codec = CursorCodec(b"k" * 32)
    good = codec.encode(Position(5.0, "a"), "dateDesc", ARCH)
    body, mac = good.split(".")
    refused(CursorCodec(b"other" * 8), good)
    refused(codec, body[:-2] + "AA." + mac)
    refused(codec, "garbage")
    refused(codec, "")
    refused(codec, "é.é")
    refused(codec, good, order="dateAsc")
    refused(codec, good, filters=None)
    refused(codec, good, filters=QueryFilters.model_validate({"category": "security"}))

"""The nesting guard of `protocol.parse_json`, with and without its shortcut."""

from __future__ import annotations

import pytest

from a2a.errors import ParseError
from a2a.rpc import protocol


@pytest.mark.parametrize(
    ("body", "depth"),
    [
        (b"[" * 4 + b"]" * 4, 4),
        (b'{"a": "[[[[[[[[", "b": [{"c": "{{{{"}]}', 3),
        (b'{"s": "' + b"[" * 100 + b'"}', 1),
    ],
    ids=["as-many-brackets-as-the-limit", "brackets-in-strings", "only-brackets-in-strings"],
)
def test_body_within_the_depth_limit_is_parsed(body: bytes, depth: int) -> None:
    value = protocol.parse_json(body, max_depth=4)
    assert protocol.nesting_depth(value) == depth


@pytest.mark.parametrize(
    "body",
    [b"[" * 5 + b"]" * 5, b'{"a": [[{"b": [1]}]], "s": "x"}'],
    ids=["arrays", "objects-and-arrays"],
)
def test_body_deeper_than_the_limit_is_a_parse_error(body: bytes) -> None:
    with pytest.raises(ParseError):
        protocol.parse_json(body, max_depth=4)

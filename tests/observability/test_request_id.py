"""Which caller request ids are kept, and the ids the service makes."""

from __future__ import annotations

import re

import pytest

from a2a.observability.request_id import accepted_request_id, new_request_id


@pytest.mark.parametrize(
    "value",
    ["abc", "req-001", "x" * 128, "a b", "~!@#$%^&*()"],
    ids=["word", "dashed", "128-chars", "inner-space", "punctuation"],
)
def test_printable_ascii_ids_up_to_128_characters_are_kept(value: str) -> None:
    assert accepted_request_id(value) == value


@pytest.mark.parametrize(
    "value",
    [None, "", "   ", "x" * 129, "a\nb", "a\tb", "caf\u00e9", "\x7f"],
    ids=["absent", "empty", "blank", "129-chars", "newline", "tab", "non-ascii", "delete"],
)
def test_other_ids_are_refused(value: str | None) -> None:
    assert accepted_request_id(value) is None


def test_new_ids_are_32_hex_digits_and_differ() -> None:
    first, second = new_request_id(), new_request_id()
    assert re.fullmatch(r"[0-9a-f]{32}", first) and first != second


def test_a_forked_child_makes_ids_its_parent_never_makes() -> None:
    """Ids are a per-process random half plus a counter: a fork draws a new half."""
    import os

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one id and leave at once
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    os.close(write)
    parent = new_request_id()
    assert re.fullmatch(r"[0-9a-f]{32}", child)
    assert child[:16] != parent[:16]

"""Client-chosen text written to the access log cannot forge lines."""

from __future__ import annotations

from a2a.observability.middleware import printable


def test_control_characters_in_method_names_are_escaped() -> None:
    forged = "x\nINFO a2a.access: call request_id=FORGED\r\t\x00"
    assert printable(forged) == "x\\nINFO a2a.access: call request_id=FORGED\\r\\t\\x00"
    assert "\n" not in printable(forged)


def test_printable_text_is_kept_as_is() -> None:
    assert printable("cstp.queryDecisions ü") == "cstp.queryDecisions ü"

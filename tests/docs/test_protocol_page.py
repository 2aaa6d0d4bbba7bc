"""docs/protocol.md, the protocol reference: each method it documents has a heading a reader
(and a table of contents) finds it by."""

from __future__ import annotations

import pytest

from tests.conftest import REPO

PAGE = REPO / "docs" / "protocol.md"
METHODS = [
    "cstp.queryDecisions",
    "cstp.findSimilarDecisions",
    "cstp.recordDecision",
    "cstp.reviewDecision",
    "cstp.getDecision",
    "cstp.listDecisions",
    "cstp.getCalibration",
    "cstp.listTenants",
]


@pytest.mark.parametrize("method", METHODS)
def test_each_method_has_a_heading_of_its_own(method: str) -> None:
    """Reported: cstp.queryDecisions, the main method, had none."""
    headings = [line for line in PAGE.read_text().splitlines() if line.startswith("#")]
    assert any(method in heading for heading in headings), headings

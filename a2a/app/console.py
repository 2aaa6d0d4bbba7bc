"""What the operator console is told of the service: how the CLI judges a result list."""

from __future__ import annotations

from typing import Any

from a2a.query.matching import BROAD_MATCH, BROAD_MATCH_DISTANCE, NO_MATCH


def console_config() -> dict[str, Any]:
    """What the console needs to judge a result list as the CLI does (JSON-ready):
    `broadMatchDistance` (cosine distance in [0, 2]), `broadMatch` and `noMatch` (the words)."""
    return {
        "broadMatchDistance": BROAD_MATCH_DISTANCE,
        "broadMatch": BROAD_MATCH,
        "noMatch": NO_MATCH,
    }

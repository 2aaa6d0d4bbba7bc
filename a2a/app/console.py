"""What the operator console is told of the service: the broad-match line it draws distance
bars against, and the words `cstp query` prints for a result list."""

from __future__ import annotations

from typing import Any

from a2a.query.matching import BROAD_MATCH, NO_MATCH, broad_match_line
from a2a.settings import Settings


def console_config(settings: Settings) -> dict[str, Any]:
    """What the console needs to show a result list as the CLI does (JSON-ready):
    `broadMatchDistance`, the line the service judges `broadMatch` by (cosine distance in
    [0, 2]; null when the model has none: a2a.query.matching.broad_match_line), which the
    distance bars are drawn against; `broadMatch` and `noMatch`, the words. Whether a list
    is a broad match the page reads from the result's own `broadMatch`."""
    # A provider's model has no measured line (a2a.query.matching): its name is not one.
    bundled = settings.embedding_model if settings.embedding_provider == "bundled" else ""
    return {
        "broadMatchDistance": broad_match_line(bundled, settings.broad_match_distance),
        "broadMatch": BROAD_MATCH,
        "noMatch": NO_MATCH,
    }

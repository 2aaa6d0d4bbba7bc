"""Labelled queries: a JSONL file of query text, relevant sources, filters and kind."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One line of a queries file: the text, relevant sources (the first is the target).

    `kind` is the query's kind as labelled (`paraphrase`, `keyword`, `filtered`), or None.
    """

    query: str
    relevant: tuple[str, ...]
    filters: dict[str, Any] | None = None
    kind: str | None = None


def load_queries(path: Path) -> list[LabelledQuery]:
    """JSONL `{"query", "relevant": [...], "filters"?, "kind"?}` lines.

    Raises ValueError naming the file and line of a line that is not a labelled query.
    """
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            queries.append(
                LabelledQuery(
                    item["query"], tuple(item["relevant"]), item.get("filters"), item.get("kind")
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a labelled query ({exc})") from None
    return queries

"""The in-process search index: every decision in memory, answered at the floor.

Chroma stays the system of record; the index is a cache rebuilt from it at start and kept
fresh by `a2a.index.sync.LiveIndex`.
"""

from __future__ import annotations

from a2a.index.search_index import IndexedRecord, Match, SearchIndex

__all__ = ["IndexedRecord", "Match", "SearchIndex"]

"""The one error the importers raise: a file that cannot be turned into records."""

from __future__ import annotations


class ParseError(Exception):
    """A file (or path) that could not be parsed; `str()` gives `"{path}: {reason}"`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

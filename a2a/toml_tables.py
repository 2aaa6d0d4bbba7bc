"""An operator's TOML file of `[[key]]` tables (the peers file, the guardrails rules): read
once at start, each fault a one-line error naming the file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_toml(path: Path, where: str, error: type[Exception]) -> dict[str, Any]:
    """The TOML document at `path`. Raises `error` starting with `where` when the file
    cannot be read or is not TOML (UTF-8)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{where}: cannot read it ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{where}: not TOML ({exc})") from None


def array_of_tables(
    document: dict[str, Any], key: str, where: str, limit: int, error: type[Exception]
) -> list[dict[str, Any]]:
    """The `[[key]]` tables of `document` (none: []), at most `limit`. Raises `error`
    starting with `where` for another top-level table, `key` not an array of tables, or
    more than `limit` of them."""
    unknown = sorted(set(document) - {key})
    if unknown:
        raise error(f"{where}: unknown table {unknown[0]!r} (use [[{key}]])")
    tables = document.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise error(f"{where}: `{key}` must be an array of tables ([[{key}]])")
    if len(tables) > limit:
        raise error(f"{where}: {len(tables)} {key}s, at most {limit}")
    return tables

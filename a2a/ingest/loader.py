"""Find decision files under the given paths and load each into records."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from a2a.errors import FileParseError
from a2a.ingest.markdown_adr import parse_adr
from a2a.ingest.precedents import load_precedent_index, owned_traces, precedent_table
from a2a.ingest.structured import parse_structured
from a2a.records import DecisionRecord

MARKDOWN_SUFFIXES: Final = frozenset({".md", ".markdown"})
YAML_SUFFIXES: Final = frozenset({".yaml", ".yml"})
JSON_SUFFIXES: Final = frozenset({".json"})
SUPPORTED_SUFFIXES: Final = MARKDOWN_SUFFIXES | YAML_SUFFIXES | JSON_SUFFIXES

# Repository meta-documents that sit beside ADRs but record no decision.
_NOT_DECISION_STEMS: Final = frozenset(
    {
        "readme",
        "index",
        "sources",
        "changelog",
        "contributing",
        "license",
        "licence",
        "code_of_conduct",
        "authors",
    }
)


@dataclass(frozen=True)
class LoadedFile:
    """One file's records (possibly none) and warnings about what was guessed or dropped."""

    path: Path
    source: str
    records: list[DecisionRecord]
    warnings: list[str]


def _is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _is_hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def _files_under(folder: Path) -> list[tuple[Path, Path]]:
    files = [
        path
        for path in folder.rglob("*")
        if path.is_file() and _is_supported(path) and not _is_hidden(path, folder)
    ]
    # A precedents folder: its INDEX.md reads the trace files, so they are not ADRs too.
    traces = owned_traces(files)
    return [(path, folder) for path in files if path not in traces]


def discover(paths: Sequence[Path]) -> list[tuple[Path, Path]]:
    """Sorted, de-duplicated `(file, root)` pairs for every supported file in `paths`.

    A folder is searched recursively and is the root of its files; hidden files and folders
    (name starting with ".") inside it are skipped, and so are the trace files an INDEX.md
    precedents table in it lists (INDEX.md reads them; seed 001). A file given directly has
    its parent as root. Supported: .md .markdown .yaml .yml .json (any case). Raises
    FileParseError(path, "no such file or directory") for a missing path and FileParseError(path,
    "unsupported file type ...") for a file given directly with another suffix.
    """
    pairs: set[tuple[Path, Path]] = set()
    for path in paths:
        if not path.exists():
            raise FileParseError(str(path), "no such file or directory")
        if path.is_dir():
            pairs.update(_files_under(path))
        elif _is_supported(path):
            pairs.add((path, path.parent))
        else:
            expected = " ".join(sorted(SUPPORTED_SUFFIXES))
            raise FileParseError(str(path), f"unsupported file type (expected one of {expected})")
    return sorted(pairs)


def source_for(path: Path, root: Path) -> str:
    """`path` relative to `root` with POSIX separators ("team/0001-x.md"); the path itself
    (POSIX) when it is not under root."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def is_non_decision_markdown(name: str) -> bool:
    """True for README.md, index.md, other repository meta-documents and Markdown templates.

    A template is a file whose name starts or ends with the word "template" (any case):
    `template.md`, `0000-TEMPLATE.md`, `adr-template.md`. Not `0010-django-templates.md`
    or `0012-use-template-engine.md`, which are real decisions about templates.
    """
    path = Path(name)
    if path.suffix.lower() not in MARKDOWN_SUFFIXES:
        return False
    stem = path.stem.lower()
    words = [word for word in re.split(r"[\W_]+", stem) if word]
    return stem in _NOT_DECISION_STEMS or (bool(words) and "template" in (words[0], words[-1]))


def _read_text(path: Path, source: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise FileParseError(source, f"not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise FileParseError(source, error.strerror or type(error).__name__) from None


def load_file(path: Path, root: Path) -> LoadedFile:
    """The records in one file, with `source` = its path relative to `root`.

    An INDEX.md holding a precedents table gives one record per row (`a2a.ingest.precedents`).
    Other Markdown is read as one ADR (README/index/template files give no records and a warning
    "skipped: ..."); YAML and JSON as one record or a list. Raises FileParseError(source, reason)
    when the file cannot be read or parsed.
    """
    source = source_for(path, root)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise FileParseError(source, "unsupported file type")
    table = precedent_table(path)
    if table is not None:
        records, warnings = load_precedent_index(path, table, lambda p: source_for(p, root))
        return LoadedFile(path, source, records, warnings)
    if is_non_decision_markdown(path.name):
        reason = "skipped: README, index, meta-document or template, not a decision record"
        return LoadedFile(path, source, [], [reason])
    text = _read_text(path, source)
    if not text.strip():
        raise FileParseError(source, "empty file")
    try:
        if suffix in MARKDOWN_SUFFIXES:
            record, warnings = parse_adr(text, source)
            return LoadedFile(path, source, [record], warnings)
        records, warnings = parse_structured(text, source, is_json=suffix in JSON_SUFFIXES)
    except FileParseError:
        raise
    except (ValueError, OverflowError, RecursionError, TypeError) as error:
        # Parsers raise these on input they cannot represent: YAML's `2026-02-30`, a JSON
        # integer of 5,000 digits, nesting past the recursion limit. One bad file is
        # reported; it never stops the others.
        raise FileParseError(source, f"cannot parse: {type(error).__name__}: {error}") from None
    return LoadedFile(path, source, records, warnings)

"""Precedent folders: a `docs/precedents/INDEX.md` table plus one trace file per issue (seed 001).

The INDEX.md table has the columns Issue, Decision, Category, Date, Tags (seed 001, Phase 2).
Each data row becomes one DecisionRecord; its trace file `<ISSUE-ID>.md` beside INDEX.md, when
present, adds the decision text, confidence, alternatives considered and outcome (Phase 3).
Trace text is data only: it is parsed into fields and stored, never followed or executed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from a2a.ingest.dates import parse_loose_date
from a2a.records import DecisionRecord, Reason

#: The file name of a precedent index (any case).
INDEX_NAME: Final = "index.md"
#: The header of the precedents table, lower-cased (seed 001, Phase 2 step 3).
COLUMNS: Final = ("issue", "decision", "category", "date", "tags")
#: Longest outcome kept, in characters; a trace's outcome section can run for pages.
MAX_OUTCOME_CHARS: Final = 500

# An issue id names a file beside INDEX.md, so no separators, no leading dot.
_ISSUE_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")
_SEPARATOR_CELL: Final = re.compile(r":?-{3,}:?")
_HEADING: Final = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_FIELD_LINE: Final = re.compile(r"^[-*\s]*\**([A-Za-z][A-Za-z ]{1,40}?)\**\s*:\s*\**\s*(.*)$")
_CONFIDENCE: Final = re.compile(r"(\d+(?:\.\d+)?)\s*/\s*10\b")
_BULLET: Final = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
#: Turns a file path into its source relative to the indexed root.
RelativePath = Callable[[Path], str]

_FIELD_NAMES: Final = {
    "decision": "decision",
    "category": "category",
    "confidence": "confidence",
    "alternatives considered": "alternatives",
    "alternatives rejected": "alternatives",
    "alternatives": "alternatives",
    "outcome": "outcome",
    "context": "context",
}


@dataclass
class PrecedentRow:
    """One data row of INDEX.md, as written (cells stripped of surrounding spaces)."""

    line: int
    issue: str
    decision: str
    category: str
    date: str
    tags: str


@dataclass
class PrecedentTable:
    """The rows of an INDEX.md precedents table and the problems found reading it."""

    rows: list[PrecedentRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def issue_ids(self) -> set[str]:
        """Ids of the well-formed rows: the trace files this index owns."""
        return {row.issue for row in self.rows}


def _cells(line: str) -> list[str] | None:
    text = line.strip()
    if not text.startswith("|"):
        return None
    return [cell.strip() for cell in text.strip("|").split("|")]


def read_table(text: str) -> PrecedentTable | None:
    """The precedents table in INDEX.md text, or None when the text has no such table.

    The table starts at the first row whose cells are exactly Issue | Decision | Category |
    Date | Tags (any case), followed by a `|---|` separator row; it ends at the first line that
    is not a table row. A data row with another number of cells, or an issue id that is not a
    plain file name (letters, digits, `.`, `_`, `-`), or an empty Decision is reported in
    `warnings` with its line number and left out.
    """
    lines = text.splitlines()
    start = next(
        (
            n
            for n, line in enumerate(lines)
            if [c.lower() for c in _cells(line) or []] == list(COLUMNS)
        ),
        None,
    )
    if start is None:
        return None
    table = PrecedentTable()
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        cells = _cells(line)
        if cells is None:
            break
        if all(_SEPARATOR_CELL.fullmatch(cell) for cell in cells):
            continue
        problem = _row_problem(cells)
        if problem:
            table.warnings.append(f"line {number}: malformed precedent row ({problem}); skipped")
            continue
        table.rows.append(PrecedentRow(number, *cells))
    return table


def _row_problem(cells: list[str]) -> str | None:
    if len(cells) != len(COLUMNS):
        return f"{len(cells)} cells, expected {len(COLUMNS)}"
    if not _ISSUE_ID.fullmatch(cells[0]):
        return f"issue id {cells[0][:40]!r} is not a plain file name"
    if cells[0].lower() == INDEX_NAME.removesuffix(".md"):
        return f"issue id {cells[0]!r} would name the INDEX.md file itself"
    if not cells[1]:
        return "empty Decision"
    return None


def split_tags(text: str) -> list[str]:
    """Tags from a Tags cell: split on commas and whitespace, backticks and `#` dropped."""
    return [tag for tag in (t.strip("`#") for t in re.split(r"[,\s]+", text)) if tag]


@dataclass
class Trace:
    """The fields read from one trace file; None where the trace does not say."""

    decision: str | None = None
    category: str | None = None
    confidence: float | None = None
    alternatives: list[str] = field(default_factory=list)
    outcome: str | None = None
    context: str | None = None


def read_trace(text: str) -> Trace:
    """The fields of a trace file (seed 001, Phase 3).

    A field is a heading (`## Alternatives Considered`) with text under it, or a line
    `Confidence: 8/10` / `**Outcome**: ...`. Confidence `N/10` becomes N/10 in [0, 1];
    each list item under Alternatives becomes one alternative. Nothing in the text is acted on.
    """
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = _FIELD_NAMES.get(_plain(heading.group(1)))
            if current:
                blocks.setdefault(current, [])
            continue
        inline = _FIELD_LINE.match(line)
        name = _FIELD_NAMES.get(_plain(inline.group(1))) if inline else None
        if inline and name:
            current = name
            blocks.setdefault(name, []).append(inline.group(2))
        elif current:
            blocks[current].append(line)
    return _trace_from(blocks)


def _plain(text: str) -> str:
    return re.sub(r"[^a-z ]+", "", text.lower()).strip()


def _joined(lines: list[str] | None) -> str | None:
    text = " ".join(" ".join(lines or []).split())
    return text or None


def _trace_from(blocks: dict[str, list[str]]) -> Trace:
    confidence = None
    match = _CONFIDENCE.search(" ".join(blocks.get("confidence", [])))
    if match and float(match.group(1)) <= 10:
        confidence = float(match.group(1)) / 10
    alternatives = []
    for line in blocks.get("alternatives", []):
        bullet = _BULLET.match(line)
        if bullet and bullet.group(1).strip():
            alternatives.append(bullet.group(1).strip())
        elif line.strip() and not alternatives:
            alternatives.append(line.strip())
    outcome = _joined(blocks.get("outcome"))
    return Trace(
        decision=_joined(blocks.get("decision")),
        category=_joined(blocks.get("category")),
        confidence=confidence,
        alternatives=alternatives,
        outcome=outcome[:MAX_OUTCOME_CHARS] if outcome else None,
        context=_joined(blocks.get("context")),
    )


def precedent_record(row: PrecedentRow, trace: Trace | None, source: str) -> DecisionRecord:
    """The DecisionRecord of one row: id = issue id, title = Decision, the trace's details.

    Table cells win for title, category and tags; the trace adds decision text, confidence,
    alternatives (reasons of type `alternative`) and outcome. Raises pydantic.ValidationError
    when a value cannot be stored.
    """
    trace = trace or Trace()
    return DecisionRecord(
        id=row.issue,
        title=row.decision,
        category=row.category or trace.category or None,
        confidence=trace.confidence,
        outcome=trace.outcome,
        date=parse_loose_date(row.date) if row.date else None,
        context=trace.context,
        decision=trace.decision or row.decision,
        reasons=[Reason(type="alternative", text=text) for text in trace.alternatives],
        tags=split_tags(row.tags),
        source=source,
    )


def load_precedent_index(
    index: Path, table: PrecedentTable, relative: RelativePath
) -> tuple[list[DecisionRecord], list[str]]:
    """Records for every row of `table` read from `index`, and warnings.

    A row whose trace `<ISSUE-ID>.md` is missing is still indexed from the table, with a
    warning; its source is INDEX.md. A trace that cannot be read, a date that cannot be
    read, or a value a record cannot hold is reported; no row stops the others.
    `relative(path)` gives a path's source relative to the indexed root.
    """
    records, warnings = [], list(table.warnings)
    for row in table.rows:
        trace_path = index.parent / f"{row.issue}.md"
        trace = None
        if trace_path.is_symlink() and trace_path.resolve().parent != index.resolve().parent:
            # A trace is data beside INDEX.md; a link out of the folder is not followed.
            warnings.append(f"{row.issue}: trace file links outside the folder; not read")
        elif trace_path.is_file():
            try:
                trace = read_trace(trace_path.read_text(encoding="utf-8-sig"))
            except (OSError, UnicodeDecodeError) as error:
                warnings.append(f"{row.issue}: trace file unreadable ({type(error).__name__})")
        else:
            warnings.append(f"{row.issue}: trace file {trace_path.name} missing; row indexed")
        if row.date and parse_loose_date(row.date) is None:
            warnings.append(f"{row.issue}: date {row.date[:40]!r} not read; left empty")
        source = relative(trace_path if trace is not None else index)
        try:
            records.append(precedent_record(row, trace, source))
        except ValidationError as error:
            fields = ", ".join(str(e["loc"][0]) for e in error.errors(include_url=False))
            warnings.append(f"line {row.line}: precedent {row.issue} not indexed ({fields})")
    return records, warnings


def precedent_table(path: Path) -> PrecedentTable | None:
    """The precedents table of an INDEX.md file; None for another file, or one without it."""
    if path.name.lower() != INDEX_NAME:
        return None
    try:
        return read_table(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError):
        return None


def owned_traces(files: list[Path]) -> set[Path]:
    """The trace files among `files` that an INDEX.md among them lists (not to be read as ADRs)."""
    owned: set[Path] = set()
    for path in files:
        table = precedent_table(path)
        if table is not None:
            owned.update(
                path.parent / f"{issue}.md"
                for issue in table.issue_ids
                if issue.lower() != INDEX_NAME.removesuffix(".md")
            )
    return owned & set(files)

"""Parse one Markdown Architecture Decision Record (Nygard, MADR, log4brains, ...) into a record."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import PurePosixPath
from typing import Any, Final

import yaml

from a2a.ingest.dates import parse_loose_date
from a2a.ingest.status import map_status
from a2a.records import DecisionRecord, Reason, Status, derive_id

#: Reason texts longer than this are cut at a word boundary and end with an ellipsis.
MAX_REASON_CHARS: Final = 4000

_FENCE: Final = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING: Final = re.compile(r"^(#{1,6})(?:\s+|(?=[0-9A-Za-z]))(.*?)\s*#*\s*$")
_FRONT_MATTER: Final = re.compile(
    r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*$\r?\n?", re.S | re.M
)
_EMPHASIS: Final = re.compile(r"[*_`]+")
_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_DASHES: Final = "\\-\u2013\u2014"  # hyphen, en dash, em dash (inside a character class)
_TITLE_PREFIXES: Final = (
    re.compile(rf"^architecture decision record\s*[:{_DASHES}]\s*", re.I),
    re.compile(rf"^(?:adr|add)[\s_{_DASHES}]*\d+\s*[:.{_DASHES}]?\s*", re.I),
    re.compile(rf"^adr\s*[:{_DASHES}]\s*", re.I),
    re.compile(rf"^\d+(?:\.\d+)*\s*[:.){_DASHES}]?\s+"),
    re.compile(r"^[A-Za-z][.)]\s+"),
)

_SECTION_KINDS: Final[dict[str, re.Pattern[str]]] = {
    "status": re.compile(r"^status\b"),
    "date": re.compile(r"^(?:date|decision date)\b"),
    "context": re.compile(r"^(?:context|background|problem)\b"),
    "decision": re.compile(r"^decisions?\b(?!\s+(?:drivers?|makers?|records?|log)\b)"),
    "consequence": re.compile(r"^consequences?\b"),
    "alternative": re.compile(r"^(?:considered options|options|alternatives)\b"),
}


@dataclass(frozen=True)
class Section:
    """A heading and the lines under it, up to the next heading of the same or higher level."""

    level: int
    key: str
    start: int
    end: int


@dataclass
class _Doc:
    """The file split into lines, with code-fence and front-matter bookkeeping."""

    lines: list[str]
    in_code: list[bool]
    front: dict[str, Any]
    body_start: int
    headings: list[tuple[int, int, str]]
    used: set[int] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)


def normalise_heading(text: str) -> str:
    """Heading text reduced for matching: "1. Context & Problem" -> "context problem"."""
    cleaned = _EMPHASIS.sub("", _LINK.sub(r"\1", text)).lower()
    cleaned = re.sub(r"^\s*(?:\d+|[a-z])[.)]\s+|^\s*\d+\s+", "", cleaned)
    return re.sub(r"[^a-z0-9]+", " ", cleaned).strip()


def clean_title(text: str) -> str:
    """A title without Markdown emphasis or leading numbering ("ADR012:", "3.", "0003 -")."""
    title = _LINK.sub(r"\1", text).strip()
    title = re.sub(r"^[*_]+|[*_]+$", "", title).strip()
    for prefix in _TITLE_PREFIXES:
        stripped = prefix.sub("", title, count=1).strip()
        if re.search(r"[A-Za-z]", stripped):
            title = stripped
    return title


def humanise_file_name(name: str) -> str:
    """A title made from a file name: "0003-use-postgres_db.md" -> "Use postgres db"."""
    stem = PurePosixPath(name).stem
    words = re.sub(r"[-_\s]+", " ", stem).strip()
    words = clean_title(words) if re.search(r"[A-Za-z]", words) else words
    return (words[:1].upper() + words[1:]) if words else name


def _code_mask(lines: list[str]) -> list[bool]:
    mask: list[bool] = []
    fence: str | None = None
    for line in lines:
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            mask.append(True)
        elif fence is not None:
            mask.append(True)
            if match and match.group(1).startswith(fence):
                fence = None
        else:
            mask.append(False)
    return mask


def _split_front_matter(text: str, warnings: list[str]) -> tuple[dict[str, Any], int]:
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, 0
    consumed_lines = text[: match.end()].count("\n")
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        warnings.append(f"front matter is not valid YAML ({type(error).__name__}); ignored")
        return {}, consumed_lines
    if not isinstance(loaded, dict):
        return {}, consumed_lines
    return {str(key).lower(): value for key, value in loaded.items()}, consumed_lines


def _find_headings(lines: list[str], in_code: list[bool], start: int) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for index in range(start, len(lines)):
        match = None if in_code[index] else _HEADING.match(lines[index])
        if match and match.group(2):
            found.append((index, len(match.group(1)), match.group(2)))
    return found


def _without_comments(text: str) -> str:
    """`text` with HTML comments blanked out, keeping line numbers.

    A linear scan: a regex with a lazy `.*?` is quadratic on many unclosed `<!--`.
    An unclosed comment runs to the end of the text, as in HTML.
    """
    parts, position = [], 0
    while (start := text.find("<!--", position)) != -1:
        parts.append(text[position:start])
        end = text.find("-->", start + 4)
        stop = len(text) if end == -1 else end + 3
        parts.append("\n" * text.count("\n", start, stop))
        position = stop
    parts.append(text[position:])
    return "".join(parts)


def _build_doc(text: str) -> _Doc:
    warnings: list[str] = []
    text = _without_comments(text)
    front, body_start = _split_front_matter(text, warnings)
    lines = re.split(r"\r?\n", text)
    in_code = _code_mask(lines)
    for index in range(body_start):
        in_code[index] = True
    headings = _find_headings(lines, in_code, body_start)
    return _Doc(lines, in_code, front, body_start, headings, set(range(body_start)), warnings)


def _title_heading(doc: _Doc) -> tuple[int, str] | None:
    for index, level, text in doc.headings:
        if level == 1:
            return index, text
    for index, _level, text in doc.headings[:1]:
        if not any(p.match(normalise_heading(text)) for p in _SECTION_KINDS.values()):
            return index, text
    return None


def _sections(doc: _Doc, title_line: int | None) -> list[Section]:
    result: list[Section] = []
    for position, (index, level, text) in enumerate(doc.headings):
        if index == title_line:
            continue
        end = len(doc.lines)
        for later_index, later_level, _text in doc.headings[position + 1 :]:
            if later_level <= level:
                end = later_index
                break
        result.append(Section(level, normalise_heading(text), index, end))
    return result


def find_section(sections: list[Section], kind: str) -> Section | None:
    """The first section whose heading names `kind` (a key of the section table), or None."""
    pattern = _SECTION_KINDS[kind]
    return next((s for s in sections if s.level <= 4 and pattern.match(s.key)), None)


def _section_text(doc: _Doc, section: Section) -> str:
    return "\n".join(doc.lines[section.start + 1 : section.end]).strip()


def _first_text_line(doc: _Doc, section: Section) -> tuple[int, str] | None:
    for index in range(section.start + 1, section.end):
        line = re.sub(r"^\s*(?:>\s*)*(?:[-*+]\s+)?", "", doc.lines[index]).strip()
        if line and not line.startswith("<!--"):
            return index, line
    return None


def _label_pattern(label: str) -> re.Pattern[str]:
    return re.compile(
        rf"^\s*(?:>\s*)?(?:[-*+]\s+)?(?:\*\*|__)?{label}(?:\*\*|__)?\s*(?::|\s)\s*(?:\*\*|__)?"
        rf"\s*(?P<value>.+?)\s*$|^\s*\|\s*(?:\*\*)?{label}(?:\*\*)?\s*:?\s*\|\s*(?P<cell>[^|]+)",
        re.I,
    )


_STATUS_LABEL: Final = _label_pattern("status")
_DATE_LABEL: Final = _label_pattern("(?:date|decision date|decided on|introduced|created)")


def _labelled_lines(doc: _Doc, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for index, line in enumerate(doc.lines):
        match = None if doc.in_code[index] else pattern.match(line)
        if match:
            found.append((index, (match.group("value") or match.group("cell") or "").strip()))
    return found


def _front_scalar(doc: _Doc, key: str) -> object:
    value = doc.front.get(key)
    return None if value in (None, "") else value


def _find_status(doc: _Doc, sections: list[Section]) -> tuple[str | None, int | None]:
    """The raw status text and the line it came from (None for front matter)."""
    front = _front_scalar(doc, "status")
    if front is not None:
        return str(front), None
    section = find_section(sections, "status")
    if section is not None:
        doc.used.update(range(section.start, section.end))
        first = _first_text_line(doc, section)
        if first is not None:
            return first[1], first[0]
    for index, value in _labelled_lines(doc, _STATUS_LABEL):
        if map_status(value) is not None:
            doc.used.add(index)
            return value, index
    return None, None


def _date_from_value(value: object) -> datetime | None:
    if isinstance(value, datetime | date):
        return parse_loose_date(value.isoformat()[:10])
    return parse_loose_date(str(value))


def _find_date(doc: _Doc, sections: list[Section], raw_status: str | None) -> datetime | None:
    front = _front_scalar(doc, "date")
    if front is not None and (parsed := _date_from_value(front)) is not None:
        return parsed
    for index, value in _labelled_lines(doc, _DATE_LABEL):
        if (parsed := parse_loose_date(value)) is not None:
            doc.used.add(index)
            return parsed
    section = find_section(sections, "date")
    if section is not None and (first := _first_text_line(doc, section)) is not None:
        doc.used.update(range(section.start, section.end))
        return parse_loose_date(first[1])
    return parse_loose_date(raw_status) if raw_status else None


def _tags(doc: _Doc) -> list[str]:
    value = doc.front.get("tags")
    if isinstance(value, str):
        return [tag.strip() for tag in value.split(",") if tag.strip()]
    if isinstance(value, list):
        return [str(tag).strip() for tag in value if str(tag).strip()]
    return []


def _cap(text: str) -> str:
    if len(text) <= MAX_REASON_CHARS:
        return text
    cut = text[:MAX_REASON_CHARS].rsplit(None, 1)[0]
    return cut.rstrip() + " …"


def _take_section(doc: _Doc, sections: list[Section], kind: str) -> str | None:
    section = find_section(sections, kind)
    if section is None:
        return None
    doc.used.update(range(section.start, section.end))
    return _section_text(doc, section) or None


def _remaining_body(doc: _Doc) -> str | None:
    kept = [line for index, line in enumerate(doc.lines) if index not in doc.used]
    text = "\n".join(kept).strip()
    return re.sub(r"\n{3,}", "\n\n", text) or None


def _reasons(doc: _Doc, sections: list[Section]) -> list[Reason]:
    reasons: list[Reason] = []
    for kind in ("consequence", "alternative"):
        text = _take_section(doc, sections, kind)
        if text:
            reasons.append(Reason(type=kind, text=_cap(text)))
    return reasons


def _status_with_warning(doc: _Doc, raw: str | None) -> Status | None:
    if raw is None:
        doc.warnings.append("no status found; stored as null")
        return None
    status = map_status(raw)
    if status is None:
        shown = raw if len(raw) <= 60 else raw[:57] + "..."
        doc.warnings.append(f"status {shown!r} not in vocabulary; stored as null")
    return status


def _title(doc: _Doc, source: str) -> tuple[str, int | None]:
    """The title and the line of its heading (None when not from a heading)."""
    heading = _title_heading(doc)
    if heading is not None:
        doc.used.add(heading[0])
        title = clean_title(heading[1])
        if title:
            return title, heading[0]
    front_title = _front_scalar(doc, "title")
    if front_title is not None and str(front_title).strip():
        return clean_title(str(front_title)), None
    return humanise_file_name(PurePosixPath(source).name), None


def parse_adr(text: str, source: str) -> tuple[DecisionRecord, list[str]]:
    """One ADR's Markdown `text` as a record plus warnings; `source` is its relative path.

    The record gets id `derive_id(source)`, the title, the status mapped onto the vocabulary
    (None with a warning when unknown or missing), the date (UTC midnight, None if absent),
    context and decision section texts (the rest of the body when there is no decision
    section), and reasons `consequence` / `alternative` from those sections. Never raises
    for odd Markdown; a near-empty file still gives a record titled from its file name.
    """
    doc = _build_doc(text)
    title, title_line = _title(doc, source)
    sections = _sections(doc, title_line)
    raw_status, status_line = _find_status(doc, sections)
    date_value = _find_date(doc, sections, raw_status)
    status = _status_with_warning(doc, raw_status)
    if status_line is not None:
        doc.used.add(status_line)
    context = _take_section(doc, sections, "context")
    decision = _take_section(doc, sections, "decision")
    reasons = _reasons(doc, sections)
    if decision is None:
        decision = _remaining_body(doc)
    record = DecisionRecord(
        id=derive_id(source),
        title=title,
        status=status,
        date=date_value,
        context=context,
        decision=decision,
        reasons=reasons,
        tags=_tags(doc),
        source=source,
    )
    return record, doc.warnings


def adr_passages(text: str) -> list[tuple[str, str]]:
    """An ADR's top-level sections as `(heading, text)` pairs, in file order.

    The sections are those one level below the title (their subsections included), found
    by the same scanner as `parse_adr`; text before the first of them (after the title and
    any front matter) is a passage with heading "". Empty passages are left out. Used to
    embed a record as several passages (bench/passages_mrr.py).
    """
    doc = _build_doc(text)
    heading = _title_heading(doc)
    title_line = None if heading is None else heading[0]
    sections = _sections(doc, title_line)
    top = min((section.level for section in sections), default=0)
    chosen = [section for section in sections if section.level == top]
    first = chosen[0].start if chosen else len(doc.lines)
    preamble = [
        line
        for index, line in enumerate(doc.lines[doc.body_start : first], doc.body_start)
        if index != title_line
    ]
    passages = [("", "\n".join(preamble).strip())]
    for section in chosen:
        title = next(text for index, _level, text in doc.headings if index == section.start)
        passages.append((title.strip(), _section_text(doc, section)))
    return [(title, body) for title, body in passages if body]

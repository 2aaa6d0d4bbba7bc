"""The documentation catalog: a YAML file listing Markdown documents, split into sections."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from a2a.errors import CatalogError

DocRole = Literal["reasoning", "decision", "ontology", "pattern"]
#: Documentation roles, for search weighting and display (seed 003, output schema).
DOC_ROLES: Final[tuple[str, ...]] = get_args(DocRole)

_HEADING: Final = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE: Final = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


class CatalogEntry(BaseModel):
    """One listed document: `path` is relative to the catalog file's folder."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    doc_id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    title: str = Field(min_length=1)
    doc_role: DocRole
    path: str = Field(min_length=1)


class CatalogFile(BaseModel):
    """The catalog file's shape: `docs:` followed by a list of entries."""

    model_config = ConfigDict(extra="forbid", strict=True)

    docs: list[CatalogEntry]


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the raw Markdown under it, up to the next heading of any level.

    `order` is the section's place in the catalog (document order, then position), the last
    tie-breaker of the ranking.
    """

    doc_id: str
    doc_title: str
    doc_role: DocRole
    heading: str
    content: str
    order: int


@dataclass(frozen=True, slots=True)
class Catalog:
    """The listed documents (doc_id -> entry, in catalog order) and all their sections."""

    docs: dict[str, CatalogEntry]
    sections: list[Section]


def split_sections(markdown: str) -> list[tuple[str, str]]:
    """`(heading, content)` pairs, split at ATX headings outside code fences.

    Text before the first heading gets heading "" and sections with no text under the
    heading are dropped (a title directly followed by a subheading adds nothing).
    """
    pairs: list[tuple[str, list[str]]] = [("", [])]
    fence: str | None = None
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)[0] * 3
            elif match.group(1).startswith(fence):
                fence = None
        heading = None if fence is not None or match else _HEADING.match(line)
        if heading:
            pairs.append((heading.group(2), []))
        else:
            pairs[-1][1].append(line)
    return [(h, "\n".join(body).strip()) for h, body in pairs if "\n".join(body).strip()]


def load_catalog(path: Path) -> Catalog:
    """The catalog at `path` with every document read and split into sections.

    Raises CatalogError naming the file, entry or document when the YAML is not a list of
    entries with doc_id, title, doc_role (reasoning | decision | ontology | pattern) and
    path, when two entries share a doc_id, or when a document cannot be read as UTF-8.
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        parsed = CatalogFile.model_validate(raw)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: cannot read ({type(exc).__name__})") from None
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise CatalogError(f"{path}: {where}: {first['msg']}") from None
    docs: dict[str, CatalogEntry] = {}
    sections: list[Section] = []
    for entry in parsed.docs:
        if entry.doc_id in docs:
            raise CatalogError(f"{path}: doc_id {entry.doc_id!r} listed twice")
        docs[entry.doc_id] = entry
        for heading, content in split_sections(_read_doc(path.parent / entry.path, entry)):
            sections.append(
                Section(
                    entry.doc_id,
                    entry.title,
                    entry.doc_role,
                    heading or entry.title,
                    content,
                    len(sections),
                )
            )
    return Catalog(docs, sections)


def _read_doc(path: Path, entry: CatalogEntry) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(
            f"doc {entry.doc_id}: cannot read {path} ({type(exc).__name__})"
        ) from None


def empty_catalog() -> Catalog:
    """A catalog with no documents (searchDocs then finds nothing)."""
    return Catalog({}, [])

"""cstp.searchDocs params and result, exactly the input and output schemas of seed 003."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, StrictStr

from a2a.docs.catalog import DocRole

#: Sections returned when `max_sections` is not given, and the hard cap (seed 003, Inputs).
DEFAULT_SECTIONS, MAX_SECTIONS = 3, 10

_ROLE = "Documentation role for search weighting and display."


def _integral(value: Any) -> Any:
    # JSON Schema's "integer" includes 2.0 (draft 2020-12, section 6.1.1); 2.5 and true do not.
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: An integer as JSON Schema reads one: 3 and 3.0, never 3.5, "3" or true.
SchemaInt = Annotated[StrictInt, BeforeValidator(_integral)]


class SearchDocsParams(BaseModel):
    """Params of cstp.searchDocs (seed 003, Input Schema): snake_case, no other keys.

    `query` is any string (an empty one finds nothing); `max_sections` an integer 1..10,
    default 3. Anything else is -32602.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    query: StrictStr = Field(description="Search query for documentation sections.")
    max_sections: SchemaInt = Field(
        default=DEFAULT_SECTIONS,
        ge=1,
        le=MAX_SECTIONS,
        description="Maximum number of sections to return (default 3, hard cap 10).",
    )


class DocSection(BaseModel):
    """One matching section: its rank (0 = best), its document, heading and raw Markdown."""

    model_config = ConfigDict(extra="forbid")

    rank: int = Field(ge=0)
    doc_id: str = Field(description="Document identifier.")
    doc_title: str = Field(description="Document title.")
    doc_role: DocRole = Field(description=_ROLE)
    heading: str = Field(description="Section heading.")
    content: str = Field(description="Section content (raw Markdown).")


class DocCovered(BaseModel):
    """A document that at least one returned section comes from."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str = Field(description="Document identifier.")
    doc_title: str = Field(description="Document title.")
    doc_role: DocRole = Field(description=_ROLE)


class SearchDocsResult(BaseModel):
    """Result of cstp.searchDocs (seed 003, Output Schema)."""

    model_config = ConfigDict(extra="forbid")

    sections: list[DocSection]
    docs_covered: list[DocCovered]
    suggested_followups: list[str] = Field(description="Role-aware follow-up prompts.")

"""The documentation search behind cstp.searchDocs, with no idea it sits behind HTTP."""

from __future__ import annotations

import logging
from pathlib import Path

from a2a.docs.catalog import Catalog, Section, empty_catalog, load_catalog
from a2a.docs.models import DocCovered, DocSection, SearchDocsParams, SearchDocsResult
from a2a.docs.ranking import SectionIndex
from a2a.errors import CatalogError

log = logging.getLogger(__name__)

#: What each role's sections are for, in the follow-up that points to another role's doc.
_ROLE_FOLLOWUPS = {
    "reasoning": "For why the service works this way, read '{title}' (doc_id {doc_id}).",
    "decision": "For the choices behind this behaviour, read '{title}' (doc_id {doc_id}).",
    "ontology": "For the exact terms, fields and codes, read '{title}' (doc_id {doc_id}).",
    "pattern": "For a worked request to copy, read '{title}' (doc_id {doc_id}).",
}


class DocsSearchService:
    """Ranked sections of the documentation catalog for a free-text query (seed 003)."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._index = SectionIndex(catalog.sections)

    def search_docs(self, params: SearchDocsParams) -> SearchDocsResult:
        """At most `params.max_sections` sections, best first, ranks 0, 1, ...

        `docs_covered` lists each document of the returned sections once, in order of first
        appearance; `suggested_followups` are role-aware (see `followups`). Never raises for
        any query: no match gives empty lists and a follow-up saying how to refine.
        """
        found = self._index.search(params.query, params.max_sections)
        sections = [
            DocSection(
                rank=rank,
                doc_id=s.doc_id,
                doc_title=s.doc_title,
                doc_role=s.doc_role,
                heading=s.heading,
                content=s.content,
            )
            for rank, s in enumerate(found)
        ]
        covered: dict[str, DocCovered] = {}
        for s in found:
            covered.setdefault(
                s.doc_id,
                DocCovered(doc_id=s.doc_id, doc_title=s.doc_title, doc_role=s.doc_role),
            )
        return SearchDocsResult(
            sections=sections,
            docs_covered=list(covered.values()),
            suggested_followups=self.followups(found),
        )

    def followups(self, found: list[Section]) -> list[str]:
        """Follow-up prompts: up to two documents of roles the results did not cover.

        With no match, one prompt naming the catalog's documents to search instead.
        """
        docs = list(self._catalog.docs.values())
        if not found:
            titles = ", ".join(f"'{d.title}'" for d in docs[:5])
            return [f"No section matched; try words from these guides: {titles}."] if docs else []
        roles = {s.doc_role for s in found}
        seen_ids = {s.doc_id for s in found}
        prompts = []
        for doc in docs:
            if doc.doc_role not in roles and doc.doc_id not in seen_ids:
                roles.add(doc.doc_role)
                prompts.append(
                    _ROLE_FOLLOWUPS[doc.doc_role].format(title=doc.title, doc_id=doc.doc_id)
                )
        prompts = prompts[:2]
        prompts.append(
            "Refine the query with a method, parameter or error code for targeted guidance."
        )
        return prompts


#: The operator guide that ships inside the package, found wherever the service runs.
BUILT_IN_CATALOG = Path(__file__).parent / "guide" / "catalog.yaml"


def docs_service(catalog_path: Path | None) -> DocsSearchService:
    """The search service over the catalog at `catalog_path` (CSTP_DOCS_CATALOG).

    None means the built-in operator guide (BUILT_IN_CATALOG).

    A missing catalog file is logged as a warning and gives an empty catalog (searchDocs
    then finds nothing), so the service still starts from another working directory. Raises
    CatalogError (a SettingsError naming CSTP_DOCS_CATALOG) for a catalog that exists but is
    malformed or lists a document that cannot be read: that is an operator's mistake.
    """
    catalog_path = catalog_path or BUILT_IN_CATALOG
    if not catalog_path.is_file():
        log.warning(
            "CSTP_DOCS_CATALOG: no catalog at %s; cstp.searchDocs finds nothing", catalog_path
        )
        return DocsSearchService(empty_catalog())
    try:
        return DocsSearchService(load_catalog(catalog_path))
    except CatalogError as exc:
        raise CatalogError(f"CSTP_DOCS_CATALOG: {exc}") from None

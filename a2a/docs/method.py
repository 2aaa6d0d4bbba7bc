"""The cstp.searchDocs entry of the method table: a thin handler over DocsSearchService."""

from __future__ import annotations

from typing import Any

from a2a.docs.models import SearchDocsParams, SearchDocsResult
from a2a.docs.service import DocsSearchService
from a2a.rpc import protocol
from a2a.rpc.methods import CallContext, Method, method


def search_docs_method(docs: DocsSearchService) -> Method:
    """cstp.searchDocs (seed 003): ranked sections of the service's documentation catalog."""

    @method(
        "cstp.searchDocs",
        SearchDocsParams,
        SearchDocsResult.model_json_schema(),
        examples=({"query": "what does error -32002 mean", "max_sections": 2},),
        errors=(protocol.INVALID_PARAMS, protocol.UNAUTHORIZED, protocol.RATE_LIMITED),
    )
    async def search_docs(params: SearchDocsParams, ctx: CallContext) -> dict[str, Any]:
        """Sections of this service's operator guide that answer a question, ranked."""
        return docs.search_docs(params).model_dump()

    return search_docs

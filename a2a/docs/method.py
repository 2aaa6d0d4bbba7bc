"""The cstp.searchDocs entry of the method table: a thin handler over DocsSearchService."""

from __future__ import annotations

from typing import Any

from a2a.docs.models import SearchDocsParams, SearchDocsResult
from a2a.docs.service import DocsSearchService
from a2a.rpc import protocol
from a2a.rpc.methods import CallContext, Method


def search_docs_method(docs: DocsSearchService) -> Method:
    """cstp.searchDocs (seed 003): ranked sections of the service's documentation catalog."""

    async def search_docs(params: SearchDocsParams, ctx: CallContext) -> dict[str, Any]:
        return docs.search_docs(params).model_dump()

    return Method(
        name="cstp.searchDocs",
        params_model=SearchDocsParams,
        handler=search_docs,
        summary="Sections of this service's operator guide that answer a question, ranked.",
        result_schema=SearchDocsResult.model_json_schema(),
        errors=(protocol.INVALID_PARAMS, protocol.UNAUTHORIZED, protocol.RATE_LIMITED),
        examples=({"query": "what does error -32002 mean", "max_sections": 2},),
    )

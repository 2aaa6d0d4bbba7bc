"""The CSTP method table: each JSON-RPC method name and the thin handler behind it.

Handlers return typed results (a2a.results); a2a.rpc makes the wire of them."""

from __future__ import annotations

from a2a import __version__
from a2a.app.decision_methods import decision_methods
from a2a.app.federated import Federation
from a2a.app.sources import AnswerSource
from a2a.app.steps import with_broad_match
from a2a.decisions.service import DecisionService
from a2a.docs.models import SearchDocsParams, SearchDocsResult
from a2a.docs.service import DocsSearchService
from a2a.query.params import QueryDecisionsParams
from a2a.query.results import QueryDecisionsResult
from a2a.rpc import protocol
from a2a.rpc.methods import CallContext, Method, NoParams, method, table
from a2a.rpc.openrpc import OPENRPC_RESULT_SCHEMA, openrpc_document
from a2a.similarity.params import FindSimilarDecisionsParams
from a2a.similarity.results import FindSimilarDecisionsResult


def build_methods(
    source: AnswerSource,
    docs: DocsSearchService | None = None,
    decisions: DecisionService | None = None,
    broad_match_line: float | None = None,
    federation: Federation | None = None,
) -> dict[str, Method]:
    """name -> Method for every method the services answer, `rpc.discover` included.

    queryDecisions and findSimilarDecisions are answered by `source`, marked `broadMatch`
    past `broad_match_line` (answer_methods); cstp.searchDocs is
    served only when `docs` is given, the decision methods (record, review, get, list,
    calibration...) only when `decisions` is; `federation`: the service's peers (None:
    none, a call naming some gets -32602). A method added to the returned table before
    the first call (name, params model, handler, scope, summary, result schema, examples)
    is served on /cstp and /mcp, listed by rpc.discover and the agent card, counted in the
    metrics and logged.
    """
    federation = federation or Federation.alone()
    methods = answer_methods(source, broad_match_line, federation)
    if docs is not None:
        methods["cstp.searchDocs"] = search_docs_method(docs)
    if decisions is not None:
        methods.update(decision_methods(decisions, federation))
    methods["rpc.discover"] = discover_method(methods)
    return methods


def answer_methods(
    source: AnswerSource,
    broad_match_line: float | None = None,
    federation: Federation | None = None,
) -> dict[str, Method]:
    """cstp.queryDecisions and cstp.findSimilarDecisions, answered by `source` (one tenant,
    every granted tenant, ...: a2a.app.sources) and the peers a call names in `peers`
    (`federation`, a2a.app.federated; None: no peers), each result marked `broadMatch`
    when none of its decisions lies within `broad_match_line` (a2a.app.steps.
    with_broad_match; None: the model has no line). A call asking N peers counts 1 + N
    against the rate limits."""
    federation = federation or Federation.alone()
    source = federation.around(source)

    @method(
        "cstp.queryDecisions",
        QueryDecisionsParams,
        QueryDecisionsResult,
        examples=(
            {"query": "database migration strategy", "limit": 5},
            {"query": "message broker", "filters": {"status": ["decided", "reviewed"]}},
        ),
        tenancy="many",
        stale=True,
        weight=federation.weight,
    )
    async def query_decisions(
        params: QueryDecisionsParams, ctx: CallContext
    ) -> QueryDecisionsResult:
        """Search past decisions by meaning: those closest to a free-text `query`, narrowed
        by `filters` (category, confidence and date ranges, stakes, status).

        Use it before deciding, to learn what was decided before on the same subject;
        `retrievalMode` "keyword" or "hybrid" when exact terms matter, `tenant` "*" to search
        every tenant the token may read. Returns `decisions`, closest first (id, title,
        category, confidence, stakes, status, outcome, date and cosine `distance`, never the
        full text: cstp.getDecision gives that), their `total`, the `query`, `queryTimeMs`
        and `agent`, a `note` when a filter matches nothing stored, and `broadMatch` true
        when none of them is close enough to be on the subject (the nearest there is, not a
        match). With `peers` (cstp.listPeers names them) the service's peer services are
        asked too, as one list, each decision naming its `peer`.
        """
        return with_broad_match(await source.query(params, ctx), broad_match_line)

    @method(
        "cstp.findSimilarDecisions",
        FindSimilarDecisionsParams,
        FindSimilarDecisionsResult,
        examples=(
            {"proposal": {"tags": ["postgres", "migration"], "category": "architecture"}},
            {"decisionId": "07c4b5c7", "filters": {"status": ["decided", "reviewed"]}, "limit": 5},
        ),
        tenancy="many",
        stale=True,
        weight=federation.weight,
    )
    async def find_similar_decisions(
        params: FindSimilarDecisionsParams, ctx: CallContext
    ) -> FindSimilarDecisionsResult:
        """Find prior decisions structurally like a `proposal` (its tags, category, stakes)
        or like a stored decision (`decisionId`); give exactly one of the two.

        Use it when about to decide, to find precedents sharing tags and category even when
        worded differently. Returns `decisions` ranked by `score` in [0, 1], each with its
        `scoreComponents` (tag overlap, category match, stakes match) and tags, their
        `total`, `queryTimeMs` and `agent`, and a `reason` when nothing can match. With
        `peers` and a `proposal`, the service's peer services are asked too.
        """
        return with_broad_match(await source.find_similar(params, ctx), broad_match_line)

    return table(query_decisions, find_similar_decisions)


def discover_method(methods: dict[str, Method]) -> Method:
    """rpc.discover: the OpenRPC document of `methods` as the table is at the first call
    (rpc.discover itself included once added)."""
    document: list[protocol.RawJson] = []

    @method(
        "rpc.discover",
        NoParams,
        OPENRPC_RESULT_SCHEMA,
        examples=({},),
        errors=(protocol.INVALID_PARAMS, protocol.UNAUTHORIZED, protocol.RATE_LIMITED),
    )
    async def discover(params: NoParams, ctx: CallContext) -> protocol.RawJson:
        """The OpenRPC document of this service: every method, its params, result and
        errors."""
        # Built and serialised once, at the first call (the table is complete by then): a
        # batch of 50 rpc.discover costs 50 splices of the same bytes, not 50 documents.
        if not document:
            document.append(protocol.RawJson.of(openrpc_document(methods, __version__)))
        return document[0]

    return discover


def search_docs_method(docs: DocsSearchService) -> Method:
    """cstp.searchDocs (seed 003): ranked sections of the service's documentation catalog."""

    @method(
        "cstp.searchDocs",
        SearchDocsParams,
        SearchDocsResult,
        examples=({"query": "what does error -32002 mean", "max_sections": 2},),
        errors=(protocol.INVALID_PARAMS, protocol.UNAUTHORIZED, protocol.RATE_LIMITED),
    )
    async def search_docs(params: SearchDocsParams, ctx: CallContext) -> SearchDocsResult:
        """Search this service's own guide (how to call it, error codes, limits, setup)
        for the sections that answer a question.

        Use it when a call fails or you are unsure how a method or parameter works. Returns
        `sections`, best first (rank, doc_id, doc_title, doc_role, heading, content as
        Markdown), `docs_covered` and `suggested_followups`.
        """
        return docs.search_docs(params)

    return search_docs

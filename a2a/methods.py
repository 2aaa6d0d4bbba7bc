"""The CSTP method table: each JSON-RPC method name and the thin handler behind it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from a2a import __version__
from a2a.query.params import QueryDecisionsParams
from a2a.query.results import QueryDecisionsResult
from a2a.query.service import QueryService
from a2a.rpc import protocol
from a2a.rpc.methods import CallContext, Method
from a2a.rpc.openrpc import openrpc_document


class NoParams(BaseModel):
    """A method that takes no params."""

    model_config = ConfigDict(extra="forbid", strict=True)


def build_methods(service: QueryService) -> dict[str, Method]:
    """name -> Method for every method the service answers, `rpc.discover` included."""

    async def query_decisions(params: QueryDecisionsParams, ctx: CallContext) -> dict[str, Any]:
        return (await service.query_decisions(params)).to_wire()

    methods = {
        "cstp.queryDecisions": Method(
            name="cstp.queryDecisions",
            params_model=QueryDecisionsParams,
            handler=query_decisions,
            summary="Decisions semantically close to a query, narrowed by structured filters.",
            result_schema=QueryDecisionsResult.model_json_schema(by_alias=True),
            errors=(
                protocol.INVALID_PARAMS,
                protocol.UNAUTHORIZED,
                protocol.RATE_LIMITED,
                protocol.STORE_UNAVAILABLE,
            ),
        ),
    }

    async def discover(params: NoParams, ctx: CallContext) -> dict[str, Any]:
        return openrpc_document(methods, __version__)

    methods["rpc.discover"] = Method(
        name="rpc.discover",
        params_model=NoParams,
        handler=discover,
        summary="The OpenRPC document of this service.",
    )
    return methods

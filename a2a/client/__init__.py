"""A Python client for cstp: typed calls, one exception per error code, a prompt helper."""

from a2a.client.clients import AsyncCSTPClient, CSTPClient
from a2a.client.errors import (
    CSTPError,
    ForbiddenError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    RateLimitedError,
    SaturatedError,
    StoreUnavailableError,
    TransportError,
    UnauthorizedError,
)
from a2a.client.peers import ListPeersResult, PeerInfo
from a2a.client.precedents import render_precedents
from a2a.query.results import DecisionSummary, QueryDecisionsResult
from a2a.records.summary import DecisionMetadata
from a2a.results import PeerDetail, PeerError, PeersBlock
from a2a.similarity.results import FindSimilarDecisionsResult

#: The result types the calls return are exported with the client (its public API).
__all__ = [
    "AsyncCSTPClient",
    "CSTPClient",
    "CSTPError",
    "DecisionMetadata",
    "DecisionSummary",
    "FindSimilarDecisionsResult",
    "ForbiddenError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "ListPeersResult",
    "MethodNotFoundError",
    "ParseError",
    "PeerDetail",
    "PeerError",
    "PeerInfo",
    "PeersBlock",
    "QueryDecisionsResult",
    "RateLimitedError",
    "SaturatedError",
    "StoreUnavailableError",
    "TransportError",
    "UnauthorizedError",
    "render_precedents",
]

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
from a2a.client.precedents import render_precedents

__all__ = [
    "AsyncCSTPClient",
    "CSTPClient",
    "CSTPError",
    "ForbiddenError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "MethodNotFoundError",
    "ParseError",
    "RateLimitedError",
    "SaturatedError",
    "StoreUnavailableError",
    "TransportError",
    "UnauthorizedError",
    "render_precedents",
]

"""One exception class per JSON-RPC / CSTP error code, raised by the Python client."""

from __future__ import annotations

from typing import Any, ClassVar

from a2a.rpc import protocol


class CSTPError(Exception):
    """An error object from the service: `code`, `message` and `data` as sent.

    Subclasses name each code; an unknown code raises this class itself.
    """

    code: ClassVar[int] = 0

    def __init__(self, message: str, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code  # type: ignore[misc]


class ParseError(CSTPError):
    """-32700: the service could not read the body as JSON."""

    code = protocol.PARSE_ERROR


class InvalidRequestError(CSTPError):
    """-32600: not a valid request object (also a body over the size cap, HTTP 413)."""

    code = protocol.INVALID_REQUEST


class MethodNotFoundError(CSTPError):
    """-32601: the service does not serve that method."""

    code = protocol.METHOD_NOT_FOUND


class InvalidParamsError(CSTPError):
    """-32602: bad params; `errors` lists `{"field": ..., "reason": ...}` for each."""

    code = protocol.INVALID_PARAMS

    @property
    def errors(self) -> list[dict[str, str]]:
        """Every bad field with its reason, as the service listed them."""
        errors = self.data.get("errors") if isinstance(self.data, dict) else None
        return list(errors) if isinstance(errors, list) else []


class InternalError(CSTPError):
    """-32603: an unexpected fault on the service (never described)."""

    code = protocol.INTERNAL_ERROR


class UnauthorizedError(CSTPError):
    """-32001 (HTTP 401): the bearer token is missing or unknown."""

    code = protocol.UNAUTHORIZED


class RateLimitedError(CSTPError):
    """-32002: over a rate limit; retry after `retry_after` seconds."""

    code = protocol.RATE_LIMITED

    @property
    def retry_after(self) -> int:
        """Whole seconds to wait before retrying (`data.retryAfter`, at least 1)."""
        value = self.data.get("retryAfter") if isinstance(self.data, dict) else None
        return value if isinstance(value, int) and value > 0 else 1


class StoreUnavailableError(CSTPError):
    """-32003: ChromaDB is unavailable or failing; `retryable` says whether to retry."""

    code = protocol.STORE_UNAVAILABLE

    @property
    def retryable(self) -> bool:
        """`data.retryable`; True when the service did not say."""
        value = self.data.get("retryable") if isinstance(self.data, dict) else None
        return value is not False


class ForbiddenError(CSTPError):
    """-32004: the token lacks the scope the method needs (`required_scope`, e.g. "write")."""

    code = -32004

    @property
    def required_scope(self) -> str | None:
        """`data.requiredScope` as sent, or None."""
        value = self.data.get("requiredScope") if isinstance(self.data, dict) else None
        return value if isinstance(value, str) else None


class SaturatedError(CSTPError):
    """-32005: the service's queue of waiting calls is full; retry after `retry_after` s."""

    code = -32005

    @property
    def retry_after(self) -> int:
        """Whole seconds to wait before retrying (`data.retryAfter`, at least 1)."""
        value = self.data.get("retryAfter") if isinstance(self.data, dict) else None
        return value if isinstance(value, int) and value > 0 else 1


class TransportError(CSTPError):
    """The service could not be reached, or answered with something that is not JSON-RPC."""


_BY_CODE: dict[int, type[CSTPError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        UnauthorizedError,
        RateLimitedError,
        StoreUnavailableError,
        ForbiddenError,
        SaturatedError,
    )
}


def error_from_object(error: Any) -> CSTPError:
    """The exception for one JSON-RPC error object; CSTPError for an unknown code."""
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return TransportError(f"malformed error object: {error!r:.200}")
    code, message = error["code"], str(error.get("message", ""))
    cls = _BY_CODE.get(code)
    if cls is None:
        return CSTPError(message, error.get("data"), code=code)
    return cls(message, error.get("data"))

"""A served method: its name, its params model, its handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from a2a.errors import FieldError, InvalidParams


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who is calling: the agent id (from the token, or the client address) and request id."""

    agent: str
    request_id: str = ""


Handler = Callable[[Any, CallContext], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Method:
    """One JSON-RPC method. `params_model` validates by name; the handler gets the model."""

    name: str
    params_model: type[BaseModel]
    handler: Handler
    summary: str = ""
    result_schema: dict[str, Any] = field(default_factory=dict)
    errors: tuple[int, ...] = ()
    #: Example params objects, shown in the OpenRPC document and the Agent Card's skills.
    examples: tuple[dict[str, Any], ...] = ()
    scope: Literal["read", "write"] = "read"

    def validate(self, params: dict[str, Any] | list[Any] | None) -> BaseModel:
        """The params as `params_model`; raises InvalidParams naming every bad field."""
        if isinstance(params, list):
            raise InvalidParams([FieldError("params", "must be an object of named params")])
        try:
            return self.params_model.model_validate(params or {})
        except ValidationError as exc:
            raise InvalidParams(field_errors(exc)) from None


#: Most error entries in one -32602 answer; a 1 MiB body must not buy a 30 MB reply.
MAX_FIELD_ERRORS = 50


def field_errors(exc: ValidationError) -> list[FieldError]:
    """pydantic errors as dotted wire paths (`filters.stakes[0]`) with plain reasons.

    At most MAX_FIELD_ERRORS entries; past that, one last entry says how many were left out.
    """
    errors = []
    details = exc.errors(include_url=False, include_context=False, include_input=False)
    for error in details[:MAX_FIELD_ERRORS]:
        path = ""
        for part in error["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        reason = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            reason = "unknown parameter"
        elif error["type"] in ("model_type", "dict_type", "model_attributes_type"):
            reason = "must be an object"
        errors.append(FieldError(path or "params", reason))
    if len(details) > MAX_FIELD_ERRORS:
        errors.append(FieldError("params", f"{len(details) - MAX_FIELD_ERRORS} more errors"))
    return errors

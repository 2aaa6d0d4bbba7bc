"""A served method: its name, its params model, its handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

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

    def validate(self, params: dict[str, Any] | list[Any] | None) -> BaseModel:
        """The params as `params_model`; raises InvalidParams naming every bad field."""
        if isinstance(params, list):
            raise InvalidParams([FieldError("params", "must be an object of named params")])
        try:
            return self.params_model.model_validate(params or {})
        except ValidationError as exc:
            raise InvalidParams(field_errors(exc)) from None


def field_errors(exc: ValidationError) -> list[FieldError]:
    """pydantic errors as dotted wire paths (`filters.stakes[0]`) with plain reasons."""
    errors = []
    for error in exc.errors(include_url=False, include_context=False, include_input=False):
        path = ""
        for part in error["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        reason = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            reason = "unknown parameter"
        errors.append(FieldError(path or "params", reason))
    return errors

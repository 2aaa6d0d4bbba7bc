"""A served method: its name, params model, handler, scope; and the context of one call."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import islice
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from a2a.auth.scopes import SCOPES, Scope, Scopes
from a2a.errors import FieldError, InvalidParams
from a2a.rpc import protocol
from a2a.rpc.protocol import FORBIDDEN
from a2a.tenants.grants import OPEN, Grant
from a2a.tenants.param import KEY as TENANT_KEY
from a2a.tenants.param import Tenancy


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who is calling: the agent id (from the token, or the client address), the scopes and
    tenants its token grants (every one with auth off), the HTTP request id, and whether
    the call came from a peer service (`CSTP-Federated: 1`: it never fans out again,
    CONTRACT.md, Federation)."""

    agent: str
    request_id: str = ""
    scopes: Scopes = SCOPES
    tenants: Grant = OPEN
    federated: bool = False


class NoParams(BaseModel):
    """A method that takes no params."""

    model_config = ConfigDict(extra="forbid", strict=True)


Handler = Callable[[Any, CallContext], Awaitable[Any]]
#: How many calls a call counts as against the caller's rate limits, from its raw params
#: (before validation: admission comes first). A call asking N peers counts 1 + N.
Weight = Callable[[dict[str, Any] | list[Any] | None], int]


def one_call(params: dict[str, Any] | list[Any] | None) -> int:
    """Every call counts once."""
    return 1


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
    #: The token scope a caller needs (CONTRACT.md section Scopes): `write` for methods that
    #: change the store.
    scope: Scope = "read"
    #: How the method takes the top-level `tenant` param (a2a.tenants.param): one tenant,
    #: one or "*" (every granted tenant), or none.
    tenancy: Tenancy = "one"
    #: The method may answer from the loaded index while Chroma is away, marked stale
    #: (CONTRACT.md; the step is the composition root's, a2a.app.steps).
    stale: bool = False
    #: How many calls one call counts as against the rate limits (CONTRACT.md, Federation).
    weight: Weight = one_call

    def answerable_errors(self) -> tuple[int, ...]:
        """`errors`, with -32004 for a method that takes `tenant` (a tenant the token is
        not granted; CONTRACT.md, Tenants)."""
        if self.tenancy == "none" or FORBIDDEN in self.errors:
            return self.errors
        return (*self.errors, FORBIDDEN)

    def params_schema(self) -> dict[str, Any]:
        """The JSON Schema of the params: the model's, with `tenant` unless tenancy "none"
        (for rpc.discover, the MCP tools and the agent card)."""
        schema = wire_schema(self.params_model)
        if self.tenancy != "none":
            many = self.tenancy == "many"
            schema.setdefault("properties", {})[TENANT_KEY] = {
                "type": "string",
                "title": "Tenant",
                "pattern": "^([a-z0-9][a-z0-9-]{0,62}|\\*)$"
                if many
                else "^[a-z0-9][a-z0-9-]{0,62}$",
                # CONTRACT.md, Tenants.
                "description": "The tenant the call reads or writes; omitted: the token's"
                " only one"
                + ('; "*": every granted tenant, ranked as one list' if many else "")
                + ".",
            }
        return schema

    def validate(self, params: dict[str, Any] | list[Any] | None) -> BaseModel:
        """The params as `params_model`; raises InvalidParams naming every bad field.

        A params object with more keys than the model has fields is refused before the
        model runs, naming at most MAX_FIELD_ERRORS unknown keys: a 60,000-key object costs
        a scan to the 50th unknown key, not 60,000 error objects. So is one holding more than
        MAX_PARAMS_VALUES values in all (a 60,000-key `filters`, a 60,000-item list), since
        the model would build an error for each.
        """
        if isinstance(params, list):
            raise InvalidParams([FieldError("params", "must be an object of named params")])
        if params and len(params) > len(accepted_keys(self.params_model)):
            raise InvalidParams(unknown_key_errors(params, accepted_keys(self.params_model)))
        over = values_over(params, MAX_PARAMS_VALUES) if params else None
        if over is not None:
            reason = f"more than {MAX_PARAMS_VALUES} values in all; no method takes that many"
            raise InvalidParams([FieldError(over, reason)])
        try:
            return self.params_model.model_validate(params or {})
        except ValidationError as exc:
            raise InvalidParams(field_errors(exc)) from None


#: What a method that reads or writes the store can answer besides its result (CONTRACT.md);
#: -32004 is added where the token may lack a scope or a tenant (Method.answerable_errors).
STORE_ERRORS = (
    protocol.INVALID_PARAMS,
    protocol.UNAUTHORIZED,
    protocol.RATE_LIMITED,
    protocol.STORE_UNAVAILABLE,
    protocol.SATURATED,
)


def method(
    name: str,
    params_model: type[BaseModel],
    result_model: type[BaseModel] | dict[str, Any],
    *,
    examples: tuple[dict[str, Any], ...],
    scope: Scope = "read",
    tenancy: Tenancy = "one",
    errors: tuple[int, ...] = STORE_ERRORS,
    stale: bool = False,
    weight: Weight = one_call,
) -> Callable[[Handler], Method]:
    """A decorator that makes its handler the Method `name`, with the handler's docstring as
    the summary and `result_model`'s JSON Schema (by alias; or a schema given as a dict)
    as the result schema; the other fields as on Method."""

    def served(handler: Handler) -> Method:
        summary = inspect.getdoc(handler) or ""
        schema = result_model if isinstance(result_model, dict) else wire_schema(result_model)
        return Method(
            name,
            params_model,
            handler,
            summary,
            schema,
            errors,
            examples,
            scope,
            tenancy,
            stale,
            weight,
        )

    return served


class WireSchema(GenerateJsonSchema):
    """JSON Schema for what callers read (rpc.discover, the MCP tools, the agent card): a
    model's docstring is written for this code's readers, citing files a caller never sees,
    so it is not the model's description there. Field descriptions stay: they are the wire's.
    """

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return _undocumented(super().model_schema(schema), schema["cls"])

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return _undocumented(super().dataclass_schema(schema), schema["cls"])


def _undocumented(json_schema: JsonSchemaValue, cls: type[Any]) -> JsonSchemaValue:
    """`json_schema` without the description pydantic took from `cls`'s docstring."""
    doc = cls.__doc__
    if doc and json_schema.get("description") == inspect.cleandoc(doc):
        del json_schema["description"]
    return json_schema


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON Schema as callers see it: by alias, without the docstrings (WireSchema)."""
    return model.model_json_schema(by_alias=True, schema_generator=WireSchema)


def table(*methods: Method) -> dict[str, Method]:
    """name -> Method."""
    return {m.name: m for m in methods}


#: Most error entries in one -32602 answer; a 1 MiB body must not buy a 30 MB reply.
MAX_FIELD_ERRORS = 50
#: Most values (object members and array items, at any depth) in one params object. The
#: largest real call (cstp.recordDecision: 20 reasons, 64 tags) holds a few hundred.
MAX_PARAMS_VALUES = 2_000


def values_over(value: dict[str, Any] | list[Any], stop_at: int) -> str | None:
    """None when `value` holds at most `stop_at` object members plus array items at any
    depth; else the dotted path (`decision.tags`, "params" for the top level) of the
    container whose members pass the count. The walk ends there.

    Containers are found with `map(type, ...)`, so a container of scalars costs one C pass.
    """
    total, level = 0, [("", value)]
    while level:
        path, item = level.pop()
        total += len(item)
        if total > stop_at:
            return path or "params"
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        children = item.values() if isinstance(item, dict) else item
        if not _CONTAINERS.isdisjoint(map(type, children)):
            level.extend(
                (_child_path(path, key), child)
                for key, child in pairs
                if type(child) in _CONTAINERS
            )
    return None


def _child_path(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{str(key)[:100]}" if path else str(key)[:100]


_CONTAINERS = frozenset({dict, list})


@cache
def accepted_keys(model: type[BaseModel]) -> frozenset[str]:
    """Every top-level key `model` can accept: field names and their aliases."""
    keys = set()
    for name, info in model.model_fields.items():
        keys.add(name)
        if info.alias:
            keys.add(info.alias)
        if isinstance(info.validation_alias, str):
            keys.add(info.validation_alias)
    return frozenset(keys)


def unknown_key_errors(params: dict[str, Any], accepted: frozenset[str]) -> list[FieldError]:
    """`unknown parameter` for the first MAX_FIELD_ERRORS keys not in `accepted`, then how
    many more there are (counted, not listed)."""
    unknown = (key for key in params if key not in accepted)
    errors = [
        FieldError(key[:100], "unknown parameter") for key in islice(unknown, MAX_FIELD_ERRORS)
    ]
    # Counted from the few accepted keys, so the scan above is all the work per key.
    rest = len(params) - sum(1 for key in accepted if key in params) - len(errors)
    if rest:
        errors.append(FieldError("params", f"{rest} more unknown parameters"))
    return errors


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

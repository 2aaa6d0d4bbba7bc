"""Every exception the service raises past one module, as one tree:

    CallError                   a call refused or failed; its caller gets `code` (JSON-RPC)
    ├── ParseError              -32700  the body is not JSON the service will read
    ├── InvalidRequest          -32600  the JSON is not a valid request object
    ├── BodyTooLarge            -32600  the body is over CSTP_MAX_BODY_BYTES (HTTP 413)
    ├── BodyTimeout             -32600  the body did not arrive in time (HTTP 408)
    ├── MethodNotFound          -32601  no method of that name is served
    ├── InvalidParams           -32602  the params break the method's rules (FieldError each)
    ├── Unauthorized            -32001  no valid bearer token (HTTP 401)
    ├── RateLimited             -32002  the agent is over a limit; retry after N s
    ├── StoreUnavailable        -32003  Chroma did not answer (down, timeout, server error)
    │   └── DiskFull                    a write refused: the embedded store's disk is full
    ├── PeerUnavailable         -32003  a peer service did not answer (getDecision's `peer`)
    ├── EmbeddingsUnavailable   -32003  the embedding provider did not answer, or answered wrong
    ├── Forbidden               -32004
    │   ├── MissingScope                the token lacks the method's scope
    │   └── TenantNotGranted            the token does not grant the tenant named
    └── Saturated               -32005  every worker busy and the queue full; retry after N s
        └── LockedElsewhere             another writer held the decision's lock too long

    ServiceFault                our own: configuration, files, the model; no call causes it
    ├── SettingsError           a setting the service cannot start with; exit 2 (cstp)
    │   ├── StartupError                found while building the service (CSTP_RATE_LIMITS...)
    │   │   └── RulesError                  CSTP_GUARDRAILS_FILE unusable: the rule and the fault
    │   ├── CaseError                   a `cstp guardrails test` case that cannot be run
    │   ├── TokenFormatError            CSTP_AUTH_TOKENS(_FILE) malformed
    │   └── CatalogError                CSTP_DOCS_CATALOG or a document it lists unusable
    ├── ExpressionError         a guardrail's CEL expression failed (compiling, probing, running)
    ├── EmbeddingModelError     the embedding model cannot load, or its process died
    ├── EmbeddingModelMismatch  the collection was built with another model (-32003 to callers)
    ├── StoreLocked             another process holds the embedded store
    ├── StoreFolderUnwritable   CSTP_DATA_DIR cannot be written (read-only, not ours)
    ├── SnapshotRefused         an index snapshot not to load (the index is rebuilt)
    ├── FileParseError          a decision file `cstp index` cannot read
    ├── ImportLineError         a line of an export file `cstp import` cannot import
    └── PruneRefused            `cstp index --prune` removed nothing, and why

    PeerFailure                 a peer service's call failed (a2a.federation): a `failed` peer
                                in a federated answer, or PeerUnavailable for getDecision

A CallError carries its JSON-RPC error object (`code`, `message`, `data`; CONTRACT.md
section Errors) so that `a2a.rpc.errors.to_error_object` maps by the tree. A ServiceFault
reaches a caller only as -32603 Internal error, EmbeddingModelMismatch excepted. This module
imports nothing of a2a: every layer may raise what it defines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar


class CallError(Exception):
    """A call refused or failed: the caller gets the JSON-RPC error object `code`,
    `message`, `data` (JSON-RPC 2.0 section 5.1; CSTP's own codes in CONTRACT.md)."""

    code: ClassVar[int]
    message: ClassVar[str]

    @property
    def data(self) -> Any:
        """The error object's `data` member (None: left out)."""
        return None


class ParseError(CallError):
    """The body is not JSON the service will read (-32700; `data.reason`)."""

    code = -32700
    message = "Parse error"

    @property
    def data(self) -> dict[str, Any]:
        return {"reason": str(self)}


class InvalidRequest(CallError):
    """The JSON is not a valid request object (-32600; `data.reason`); `id` is echoed when
    it was valid."""

    code = -32600
    message = "Invalid Request"

    def __init__(self, reason: str, id: str | int | float | None = None) -> None:
        super().__init__(reason)
        self.id = id

    @property
    def data(self) -> dict[str, Any]:
        return {"reason": str(self)}


class BodyTooLarge(CallError):
    """The body is over the cap (-32600, HTTP 413; CONTRACT.md section Transport)."""

    code = InvalidRequest.code
    message = InvalidRequest.message


class BodyTimeout(CallError):
    """The body has not fully arrived within the body timeout (-32600, HTTP 408)."""

    code = InvalidRequest.code
    message = InvalidRequest.message


class MethodNotFound(CallError):
    """No method of that name (case-sensitive) is served (-32601; `data.method`)."""

    code = -32601
    message = "Method not found"

    @property
    def data(self) -> dict[str, Any]:
        # The name is the client's own: echo enough to recognise it, not a 500 KB string.
        return {"method": str(self)[:100]}


@dataclass(frozen=True, slots=True)
class FieldError:
    """One bad input: dotted path (`filters.minConfidence`, `filters.stakes[1]`) and why."""

    field: str
    reason: str


class InvalidParams(CallError):
    """The call's params break the method's rules (-32602; `data.errors`, every bad field)."""

    code = -32602
    message = "Invalid params"

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.reason}" for e in errors))
        self.errors = errors

    @property
    def data(self) -> dict[str, Any]:
        return {"errors": [{"field": e.field, "reason": e.reason} for e in self.errors]}


class Unauthorized(CallError):
    """No valid bearer token (CSTP -32001, HTTP 401)."""

    code = -32001
    message = "Unauthorized"


class RateLimited(CallError):
    """The calling agent is over its limit (CSTP -32002); retry after `retry_after` seconds
    (`data.retryAfter`, at least 1)."""

    code = -32002
    message = "Rate limited"

    def __init__(self, retry_after: int, limit: str = "", quotas: Sequence[Any] = ()) -> None:
        super().__init__(f"rate limit {limit} exceeded; retry after {retry_after} s")
        self.retry_after = max(1, retry_after)
        self.limit = limit
        #: The `a2a.rpc.quota.Quota` of each limit the call was counted against.
        self.quotas = tuple(quotas)

    @property
    def data(self) -> dict[str, Any]:
        return {"retryAfter": self.retry_after}


class StoreUnavailable(CallError):
    """Chroma could not answer: connection refused, timeout, server error (CSTP -32003,
    `data.retryable` true, `data.reason` when there is one)."""

    code = -32003
    message = "ChromaDB unavailable"
    #: Why, when the client can act on it (CSTP -32003 `data.reason`); None: not said.
    reason: str | None = None

    @property
    def data(self) -> dict[str, Any]:
        if self.reason is None:
            return {"retryable": True}
        return {"retryable": True, "reason": self.reason}


class DiskFull(StoreUnavailable):
    """A write refused before it reached the embedded store: its disk is (nearly) full
    (a2a.store.disk). Retryable once space is freed; nothing stored is touched."""

    reason = "disk full"


class PeerUnavailable(CallError):
    """A peer service named by the call (cstp.getDecision's `peer`) did not answer, or
    answered what cannot be used (CSTP -32003, `data: {"peer": name}`; CONTRACT.md,
    Federation). Not StoreUnavailable: this service's own store is fine."""

    code = -32003
    message = "peer unavailable"

    def __init__(self, peer: str, reason: str) -> None:
        super().__init__(f"peer {peer}: {reason}")
        self.peer = peer

    @property
    def data(self) -> dict[str, Any]:
        return {"peer": self.peer}


class EmbeddingsUnavailable(CallError):
    """The embedding provider (CSTP_EMBEDDING_PROVIDER) is unreachable, failing, or gave an
    answer that cannot be used (CSTP -32003, `data: {"unavailable": "embeddings"}`;
    CONTRACT.md, Embedding providers): calls that need a new vector fail, nothing is
    stored. `str()` says what was wrong, for the log and `cstp index`, never with the API
    key. Not StoreUnavailable: Chroma is fine, so reads are not answered stale for it."""

    code = -32003
    message = "embedding provider unavailable"

    @property
    def data(self) -> dict[str, Any]:
        return {"unavailable": "embeddings"}


class Forbidden(CallError):
    """The caller's token does not allow the call (CSTP -32004); the subclass says why."""

    code = -32004
    message = "Forbidden"


class MissingScope(Forbidden):
    """The caller's token lacks the scope the method needs (`data.requiredScope`)."""

    def __init__(self, required: str) -> None:
        super().__init__(f"this method needs a token with scope {required!r}")
        self.required = required

    @property
    def data(self) -> dict[str, Any]:
        return {"requiredScope": self.required}


class TenantNotGranted(Forbidden):
    """The caller's token does not grant the tenant a call names, whether or not it exists
    (`data.requiredTenant`; CONTRACT.md, Tenants)."""

    def __init__(self, tenant: str) -> None:
        super().__init__("this token does not grant the tenant the call names")
        self.tenant = tenant

    @property
    def data(self) -> dict[str, Any]:
        return {"requiredTenant": self.tenant}


class Saturated(CallError):
    """The bounded queue of calls waiting for a worker is full (CSTP -32005; `data.retryable`
    true, `data.retryAfter`).

    Never raised for Chroma being slow or down; `retry_after` is whole seconds, at least 1.
    """

    code = -32005
    message = "Service saturated"

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"service saturated; retry after {retry_after} s")
        self.retry_after = max(1, retry_after)

    @property
    def data(self) -> dict[str, Any]:
        return {"retryable": True, "retryAfter": self.retry_after}


class LockedElsewhere(Saturated):
    """Another writer (a replica, or `cstp index`) held a decision's lock past the wait
    bound: -32005, retry after `retry_after` seconds. Those waiting for the same id in this
    process get it too, at once (a2a.decisions.locks.KeyedLocks' shared failures)."""


class ServiceFault(Exception):
    """A fault of ours (configuration, files, the model), never caused by a call: the
    command line prints it and exits, a call that meets it gets -32603 Internal error."""


class SettingsError(ServiceFault):
    """Settings that cannot start the service; `str()` names each offending setting
    (`CSTP_<NAME>: ...`)."""


class StartupError(SettingsError):
    """A setting found unusable while the service is built; the message names it
    (`CSTP_RATE_LIMITS: ...`)."""


class RulesError(StartupError):
    """A guardrails rules file that cannot be used (a2a.guardrails.rules); the message names
    the file, the rule, its field and why."""


class CaseError(SettingsError):
    """A `cstp guardrails test` case that cannot be run (a2a.guardrails.cases); the message
    names its line and the fault."""


class ExpressionError(ServiceFault):
    """A guardrail's CEL expression that cannot be used or failed on one input; the message
    is the CEL error (a2a.guardrails.expressions). Never reaches a caller: a bad rule is a
    RulesError at start, one failing at run time a rule that does not apply or a violation."""


class TokenFormatError(SettingsError):
    """A token entry is malformed; the message names the entry, never the token itself."""


class CatalogError(SettingsError):
    """The docs catalog file or a document it lists cannot be used; the message names which."""


class EmbeddingModelError(ServiceFault):
    """The configured embedding model cannot be loaded (not installed, no network, bad file),
    or the process running it died."""


class EmbeddingModelMismatch(ServiceFault):
    """The collection was built with another embedding model than the configured one.

    Callers get -32003 with `data.retryable` false: retrying cannot help, an operator must
    fix the configuration (a2a.rpc.errors.to_error_object).
    """

    def __init__(self, collection: str, stored: str, configured: str) -> None:
        super().__init__(
            f"collection {collection!r} was built with embedding model {stored!r} but the "
            f"service is configured with {configured!r}; configure {stored} again "
            f"(CSTP_EMBEDDING_PROVIDER, CSTP_EMBEDDING_MODEL, CSTP_EMBEDDING_DIMENSIONS) or "
            f"use a new collection (CSTP_COLLECTION) for the other model"
        )
        self.stored = stored
        self.configured = configured


class StoreLocked(ServiceFault):
    """Another process holds the embedded store (two writers corrupt Chroma's files)."""


class StoreFolderUnwritable(ServiceFault):
    """The embedded store's folder (CSTP_DATA_DIR) cannot be written: read-only, or not
    ours. Chroma's embedded store and its lock file live there, so nothing can start."""

    def __init__(self, folder: str, reason: str) -> None:
        super().__init__(
            f"the data folder {folder} cannot be written ({reason}): the embedded store keeps "
            f"its files there; make it writable or set CSTP_DATA_DIR to a writable folder"
        )
        self.folder = folder


class SnapshotRefused(ServiceFault):
    """A snapshot that must not be loaded; the message says why (logged by the caller)."""


class FileParseError(ServiceFault):
    """A decision file (or path) that could not be parsed; `str()` gives `"{path}: {reason}"`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ImportLineError(ServiceFault):
    """A line of an export file that `cstp import` cannot import: its number (from 1) and
    each reason as `field: why`; `str()` gives `"line {number}: {reasons}"`."""

    def __init__(self, number: int, reasons: list[str]) -> None:
        super().__init__(f"line {number}: " + "; ".join(reasons))
        self.number = number
        self.reasons = reasons


class PruneRefused(ServiceFault):
    """Nothing pruned, and why: a path given to prune could not be read (pruning would
    remove everything under it), or the links to lock kept changing."""


class PeerFailure(Exception):
    """A peer's call failed (a2a.federation.client): `code` (the peer's own JSON-RPC error
    code when it answered one, else -32003) and `message`, ours and safe to show: never the
    peer's text, a token or a URL. `data` is the peer's error data when it answered an
    error (unvalidated: whoever reads it checks it)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

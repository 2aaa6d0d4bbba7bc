"""The peers file (CSTP_PEERS_FILE): which cstp services this one may ask, as TOML.

    [[peer]]
    name = "billing"                    # [a-z0-9][a-z0-9-]{0,62}, unique
    url = "https://billing.example:8000"  # calls go to {url}/cstp
    token_env = "CSTP_PEER_BILLING_TOKEN" # optional: the variable holding the bearer token
    tenant = "payments"                 # optional: the tenant asked there

Peers are operator config, never caller input (CONTRACT.md, Federation). Tokens come from
the environment only: the file names the variable, never the token.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from a2a.errors import StartupError
from a2a.toml_tables import array_of_tables, read_toml

#: A peer's name: a tenant name's rule (CONTRACT.md, Federation).
PEER_NAME = r"^[a-z0-9][a-z0-9-]{0,62}$"
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
#: Peers one file may name: a call fans out to all of them at most.
MAX_PEERS = 32


class PeerConfig(BaseModel):
    """One peer as the file names it, with its token read from `token_env` (None: sent
    without a token)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: Annotated[str, Field(pattern=PEER_NAME)]
    url: str
    token_env: Annotated[str, Field(pattern=_ENV_NAME)] | None = None
    tenant: Annotated[str, Field(pattern=PEER_NAME)] | None = None
    token: SecretStr | None = Field(default=None, exclude=True)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        from httpx import URL, InvalidURL

        try:
            url = URL(value)
        except InvalidURL as exc:
            raise ValueError(f"not a URL ({exc})") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError("must be an http:// or https:// URL with a host")
        if url.userinfo or url.query or url.fragment:
            raise ValueError("must not carry credentials, a query or a fragment")
        return value.rstrip("/")

    @property
    def endpoint(self) -> str:
        """The peer's JSON-RPC endpoint, `{url}/cstp`."""
        return f"{self.url}/cstp"


def load_peers(path: Path | None, environ: dict[str, str] | None = None) -> tuple[PeerConfig, ...]:
    """The peers of the file at `path` (None: no peers), in file order, each with its token
    from `environ` (default os.environ).

    Raises StartupError naming the peer and the field: `CSTP_PEERS_FILE peer[1] ("billing")
    url: ...`; a file that cannot be read or is not TOML; a duplicate name; a `token_env`
    naming a variable that is not set.
    """
    if path is None:
        return ()
    environ = dict(os.environ) if environ is None else environ
    where = f"CSTP_PEERS_FILE {path}"
    document = read_toml(path, where, StartupError)
    tables = array_of_tables(document, "peer", where, MAX_PEERS, StartupError)
    peers: list[PeerConfig] = []
    for n, table in enumerate(tables):
        peer = _peer(path, n, table, environ)
        if any(p.name == peer.name for p in peers):
            raise StartupError(f"{_where(path, n, table)} name: {peer.name!r} is named twice")
        peers.append(peer)
    return tuple(peers)


def _peer(path: Path, n: int, table: dict[str, Any], environ: dict[str, str]) -> PeerConfig:
    where = _where(path, n, table)
    try:
        peer = PeerConfig.model_validate({k: v for k, v in table.items() if k != "token"})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "peer"
        reason = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        raise StartupError(f"{where} {field}: {reason}") from None
    if "token" in table:
        raise StartupError(f"{where} token: tokens come from the environment (use token_env)")
    if peer.token_env is None:
        return peer
    token = environ.get(peer.token_env)
    if not token:
        raise StartupError(f"{where} token_env: the variable {peer.token_env} is not set")
    return peer.model_copy(update={"token": SecretStr(token)})


def _where(path: Path, n: int, table: dict[str, Any]) -> str:
    name = table.get("name")
    named = f" ({name!r})" if isinstance(name, str) else ""
    return f"CSTP_PEERS_FILE {path}: peer[{n}]{named}"

"""Agent tokens: parsing `agent:token[:scopes[:tenants]]` entries and looking a presented
token up in constant time."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from a2a.auth.scopes import READ_ONLY, SCOPES, Scopes
from a2a.errors import TokenFormatError
from a2a.tenants.grants import DEFAULT_ONLY, Grant

if TYPE_CHECKING:
    from a2a.settings import Settings

# Agent ids become parts of rate-limit keys, so no separators (`/`, `:`, `,`) or spaces.
_AGENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
# RFC 6750 section 2.1 b64token: what may follow `Bearer ` in an Authorization header.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True, slots=True)
class TokenEntry:
    """One configured token: the agent it names, the scopes it grants (CONTRACT.md, Scopes)
    and the tenants it may use (CONTRACT.md, Tenants)."""

    agent: str
    token: str
    scopes: Scopes = READ_ONLY
    tenants: Grant = DEFAULT_ONLY


def parse_entries(lines: Iterable[str], where: str) -> list[TokenEntry]:
    """Entries from `agent:token`, `agent:token:read+write` or `agent:token:read:acme|globex`
    lines (tenants: names joined by `|`, or `*` for every tenant); blank and `#` lines
    skipped.

    An entry without scopes has `read` only; without tenants, tenant `default` only.
    `where` names the source in errors ("entry", "line"). Raises TokenFormatError for an
    entry without `:`, a bad agent id, a token that is not an RFC 6750 b64token, an unknown
    scope or a bad tenant name; the message never contains the token.
    """
    entries = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        agent, sep, rest = (part.strip() for part in line.partition(":"))
        token, _, scope_text = (part.strip() for part in rest.partition(":"))
        if not sep or not token:
            raise TokenFormatError(f"{where} {number}: expected agent:token[:scopes[:tenants]]")
        if not _AGENT.fullmatch(agent):
            raise TokenFormatError(
                f"{where} {number}: agent id {agent!r} must be letters, digits, '.', '_', '@', '-'"
            )
        if not _TOKEN.fullmatch(token):
            raise TokenFormatError(
                f"{where} {number} (agent {agent}): token has characters a bearer token cannot"
            )
        scope_text, _, tenant_text = scope_text.partition(":")
        try:
            tenants = Grant.parse(tenant_text)
        except ValueError as exc:
            raise TokenFormatError(f"{where} {number} (agent {agent}): {exc}") from None
        entries.append(
            TokenEntry(agent, token, _scopes(scope_text.strip(), f"{where} {number}"), tenants)
        )
    return entries


def _scopes(text: str, where: str) -> Scopes:
    if not text:
        return READ_ONLY
    names = [name.strip() for name in text.split("+")]
    unknown = [name for name in names if name not in SCOPES]
    if unknown:
        raise TokenFormatError(
            f"{where}: unknown scope {unknown[0]!r}; scopes are {'+'.join(sorted(SCOPES))}"
        )
    return frozenset(names)


def parse_env_tokens(value: SecretStr | None) -> list[TokenEntry]:
    """Entries of CSTP_AUTH_TOKENS: `a1:t1,a2:t2:read+write` (newlines work as commas)."""
    if value is None:
        return []
    text = value.get_secret_value().replace("\n", ",")
    return parse_entries(text.split(","), "entry")


def read_token_file(path: Path) -> list[TokenEntry]:
    """Entries of a secrets file, one `agent:token[:scopes]` per line, `#` comments allowed.

    Raises TokenFormatError when the file cannot be read or a line is malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise TokenFormatError(f"cannot read {path}: {reason}") from None
    return parse_entries(text.splitlines(), "line")


class TokenTable:
    """Token -> (agent id, scopes). Lookups compare against every token in constant time.

    Only SHA-256 digests are kept, so every comparison is between equal-length values and
    `hmac.compare_digest` leaks neither a token's prefix nor its length.
    """

    def __init__(self, entries: Iterable[TokenEntry]) -> None:
        table: dict[bytes, TokenEntry] = {}
        for entry in entries:
            digest = _digest(entry.token)
            known = table.setdefault(digest, entry)
            if known.agent != entry.agent:
                raise TokenFormatError(
                    f"one token is given to agents {known.agent} and {entry.agent}"
                )
            if known.scopes != entry.scopes:
                raise TokenFormatError(f"one token of agent {entry.agent} has two sets of scopes")
            if known.tenants != entry.tenants:
                raise TokenFormatError(f"one token of agent {entry.agent} has two sets of tenants")
        self._entries = [
            (digest, entry.agent, entry.scopes, entry.tenants) for digest, entry in table.items()
        ]

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def agents(self) -> set[str]:
        """Every agent id that has at least one token."""
        return {agent for _, agent, _, _ in self._entries}

    def lookup(self, token: str | None) -> tuple[str, Scopes, Grant] | None:
        """`(agent id, scopes, tenants)` of this token, or None (also for None and "")."""
        presented = _digest(token or "")
        found = None
        for digest, agent, scopes, tenants in self._entries:
            # No early exit: the time taken does not depend on which token matched.
            if hmac.compare_digest(digest, presented):
                found = (agent, scopes, tenants)
        return found

    def agent_for(self, token: str | None) -> str | None:
        """The agent id whose token this is, or None (also for None and "")."""
        found = self.lookup(token)
        return None if found is None else found[0]


def load_token_table(settings: Settings) -> TokenTable:
    """The tokens of CSTP_AUTH_TOKENS and CSTP_AUTH_TOKENS_FILE together (empty: auth off).

    Raises TokenFormatError (a SettingsError naming the setting) for malformed entries or one
    token given to two agents.
    """
    try:
        entries = parse_env_tokens(settings.auth_tokens)
    except TokenFormatError as exc:
        raise TokenFormatError(f"CSTP_AUTH_TOKENS: {exc}") from None
    if settings.auth_tokens_file is not None:
        try:
            entries += read_token_file(settings.auth_tokens_file)
        except TokenFormatError as exc:
            raise TokenFormatError(f"CSTP_AUTH_TOKENS_FILE: {exc}") from None
    try:
        return TokenTable(entries)
    except TokenFormatError as exc:
        raise TokenFormatError(f"CSTP_AUTH_TOKENS / CSTP_AUTH_TOKENS_FILE: {exc}") from None


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()

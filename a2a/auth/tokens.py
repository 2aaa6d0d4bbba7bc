"""Agent tokens: parsing `agent:token` entries and looking a presented token up in constant time."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

if TYPE_CHECKING:
    from a2a.settings import Settings

# Agent ids become parts of rate-limit keys, so no separators (`/`, `:`, `,`) or spaces.
_AGENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
# RFC 6750 section 2.1 b64token: what may follow `Bearer ` in an Authorization header.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class TokenFormatError(ValueError):
    """A token entry is malformed; the message names the entry, never the token itself."""


def parse_entries(lines: Iterable[str], where: str) -> list[tuple[str, str]]:
    """`(agent, token)` pairs from `agent:token` lines; blank lines and `#` lines skipped.

    `where` names the source in errors ("CSTP_AUTH_TOKENS entry", "line"). Raises
    TokenFormatError for an entry without `:`, a bad agent id, or a token that is not an
    RFC 6750 b64token; the message never contains the token.
    """
    entries = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        agent, sep, token = (part.strip() for part in line.partition(":"))
        if not sep or not token:
            raise TokenFormatError(f"{where} {number}: expected agent:token")
        if not _AGENT.fullmatch(agent):
            raise TokenFormatError(
                f"{where} {number}: agent id {agent!r} must be letters, digits, '.', '_', '@', '-'"
            )
        if not _TOKEN.fullmatch(token):
            raise TokenFormatError(
                f"{where} {number} (agent {agent}): token has characters a bearer token cannot"
            )
        entries.append((agent, token))
    return entries


def parse_env_tokens(value: SecretStr | None) -> list[tuple[str, str]]:
    """Entries of CSTP_AUTH_TOKENS: `agent1:token1,agent2:token2` (newlines work as commas)."""
    if value is None:
        return []
    text = value.get_secret_value().replace("\n", ",")
    return parse_entries(text.split(","), "entry")


def read_token_file(path: Path) -> list[tuple[str, str]]:
    """Entries of a secrets file, one `agent:token` per line, `#` comments allowed.

    Raises TokenFormatError when the file cannot be read or a line is malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        raise TokenFormatError(f"cannot read {path}: {reason}") from None
    return parse_entries(text.splitlines(), "line")


class TokenTable:
    """Token -> agent id. Lookups compare against every token in constant time.

    Only SHA-256 digests are kept, so every comparison is between equal-length values and
    `hmac.compare_digest` leaks neither a token's prefix nor its length.
    """

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        table: dict[bytes, str] = {}
        for agent, token in entries:
            digest = _digest(token)
            if table.setdefault(digest, agent) != agent:
                raise TokenFormatError(f"one token is given to agents {table[digest]} and {agent}")
        self._entries = list(table.items())

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def agents(self) -> set[str]:
        """Every agent id that has at least one token."""
        return {agent for _, agent in self._entries}

    def agent_for(self, token: str | None) -> str | None:
        """The agent id whose token this is, or None (also for None and "")."""
        presented = _digest(token or "")
        found = None
        for digest, agent in self._entries:
            # No early exit: the time taken does not depend on which token matched.
            if hmac.compare_digest(digest, presented):
                found = agent
        return found


def load_token_table(settings: Settings) -> TokenTable:
    """The tokens of CSTP_AUTH_TOKENS and CSTP_AUTH_TOKENS_FILE together (empty: auth off).

    Raises TokenFormatError (a ValueError naming the setting) for malformed entries or one
    token given to two agents.
    """
    entries = parse_env_tokens(settings.auth_tokens)
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

"""Scopes a token grants: `read` and `write` (CONTRACT.md section Scopes)."""

from __future__ import annotations

from typing import Final, Literal

Scope = Literal["read", "write"]
Scopes = frozenset[str]

#: Every scope there is.
SCOPES: Final[Scopes] = frozenset({"read", "write"})
#: What a token configured without scopes grants.
READ_ONLY: Final[Scopes] = frozenset({"read"})


def allows(granted: Scopes, required: Scope) -> bool:
    """True when `granted` covers `required`; a `write` token can read too."""
    return required in granted or (required == "read" and "write" in granted)

"""Scopes a token grants: `read`, `write` and `admin` (CONTRACT.md sections Scopes and
Lifecycle of a decision)."""

from __future__ import annotations

from typing import Final, Literal

Scope = Literal["read", "write", "admin"]
Scopes = frozenset[str]

#: Every scope there is.
SCOPES: Final[Scopes] = frozenset({"read", "write", "admin"})
#: What a token configured without scopes grants.
READ_ONLY: Final[Scopes] = frozenset({"read"})
#: What each scope implies besides itself: `admin` may do everything `write` may, and a
#: `write` token can read too.
_IMPLIED: Final[dict[str, frozenset[str]]] = {
    "admin": frozenset({"write", "read"}),
    "write": frozenset({"read"}),
}


def allows(granted: Scopes, required: Scope) -> bool:
    """True when `granted` covers `required` (`admin` > `write` > `read`)."""
    return required in granted or any(required in _IMPLIED.get(s, ()) for s in granted)

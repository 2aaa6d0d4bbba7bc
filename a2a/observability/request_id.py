"""Request ids: the caller's `X-Request-ID` when it is safe to echo and log, else a new one."""

from __future__ import annotations

import uuid

#: Longest request id taken from a caller, in characters.
MAX_REQUEST_ID_LENGTH = 128


def new_request_id() -> str:
    """A fresh id: 32 lowercase hex digits (a random UUID)."""
    return uuid.uuid4().hex


def accepted_request_id(value: str | None) -> str | None:
    """`value` when it can be echoed and logged as is, else None.

    Accepted: 1 to 128 printable ASCII characters (space to `~`), not only spaces. Anything
    else (control characters, non-ASCII, longer) is replaced rather than cleaned, so an id
    in the logs is always exactly what the caller sent or one the service made.
    """
    if value is None or not 0 < len(value) <= MAX_REQUEST_ID_LENGTH or not value.strip():
        return None
    if all(" " <= char <= "~" for char in value):
        return value
    return None

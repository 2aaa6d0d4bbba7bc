"""Request ids: the caller's `X-Request-ID` when it is safe to echo and log, else a new one."""

from __future__ import annotations

import itertools
import os
import secrets

#: Longest request id taken from a caller, in characters.
MAX_REQUEST_ID_LENGTH = 128


#: This process's random prefix; each id adds a counter (unique without a syscall per id).
_PREFIX = secrets.token_hex(8)
_COUNTER = itertools.count(1)


def _redraw_prefix() -> None:
    """A forked child draws its own prefix, so parent and child never share ids."""
    global _PREFIX
    _PREFIX = secrets.token_hex(8)


os.register_at_fork(after_in_child=_redraw_prefix)


def new_request_id() -> str:
    """A fresh id: 32 lowercase hex digits, a random per-process half and a counter half.

    Unique across processes (64 random bits) and within one (the counter; `next` on
    itertools.count is atomic under the GIL), without reading the OS's random source per
    request (uuid4 did: it showed in profiles of the event loop under load).
    """
    return f"{_PREFIX}{next(_COUNTER):016x}"


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

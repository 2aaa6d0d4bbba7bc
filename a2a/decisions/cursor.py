"""Opaque listDecisions cursors: a keyset position, signed so a foreign one is refused."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from typing import Any

from a2a.decisions.paging import Order, Position
from a2a.errors import FieldError, InvalidParams
from a2a.records.filters import QueryFilters

#: Bytes of HMAC-SHA256 kept in a cursor: 128 bits, far beyond guessing.
_MAC_BYTES = 16


def filters_digest(filters: QueryFilters | None) -> str:
    """A short digest of `filters` as validated: a cursor is valid only with the same ones."""
    dumped = None if filters is None else filters.model_dump(mode="json", exclude_none=True)
    text = json.dumps(dumped, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class CursorCodec:
    """Encodes a Position with its order and filters digest; HMAC-SHA256 under `key`.

    Replicas that must accept each other's cursors need the same key (CSTP_CURSOR_SECRET);
    without one each process draws its own.
    """

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def encode(self, position: Position, order: Order, filters: QueryFilters | None) -> str:
        """The cursor string: base64url(JSON) "." base64url(MAC)."""
        payload = {"o": order, "f": filters_digest(filters), "d": position.date, "i": position.id}
        body = _b64(json.dumps(payload, separators=(",", ":")).encode())
        return f"{body}.{_b64(self._mac(body))}"

    def decode(self, cursor: str, order: Order, filters: QueryFilters | None) -> Position:
        """The Position in `cursor`; raises InvalidParams on `cursor` when it was not issued
        here, was altered, or was issued for another order or other filters.
        """
        body, _, mac = cursor.partition(".")
        try:
            valid = hmac.compare_digest(_unb64(mac), self._mac(body))
            payload: Any = json.loads(_unb64(body)) if valid else None
        except (ValueError, binascii.Error):
            payload = None
        if not isinstance(payload, dict):
            raise _bad("not a cursor issued by this service")
        if payload.get("o") != order or payload.get("f") != filters_digest(filters):
            raise _bad("issued for another order or other filters")
        date, last_id = payload.get("d"), payload.get("i")
        if not isinstance(last_id, str) or not (date is None or isinstance(date, int | float)):
            raise _bad("not a cursor issued by this service")
        return Position(date=None if date is None else float(date), id=last_id)

    def _mac(self, body: str) -> bytes:
        return hmac.new(self._key, body.encode("ascii", "replace"), hashlib.sha256).digest()[
            :_MAC_BYTES
        ]


def _bad(reason: str) -> InvalidParams:
    return InvalidParams([FieldError("cursor", reason)])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

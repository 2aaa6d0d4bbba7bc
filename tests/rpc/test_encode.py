"""Response bodies are compact JSON that reads back as the value sent (a2a.rpc.protocol)."""

from __future__ import annotations

import json
import math
from enum import StrEnum
from typing import Any

import numpy as np
import pytest

from a2a.rpc import protocol


class Colour(StrEnum):
    RED = "red"


@pytest.mark.parametrize(
    ("result", "read_back"),
    [
        ({"distance": 0.533019, "total": 3, "ok": True, "outcome": None}, None),
        ([0.0, 1e-4, 0.0001234, 1e16, 1.7976931348623157e308, 5e-324, 1e-5, -2e-05], None),
        ({"title": 'é \u2028 \x00\x1f\x7f "q" \\ / 😀', "nested": [[{}]]}, None),
        ({"id": 2**64, "negative": -(2**63) - 1}, None),
        ({1: "int key", None: "null key"}, {"1": "int key", "null": "null key"}),
        ({"numpy": np.float64(0.25), "tiny": np.float64(1e-6)}, {"numpy": 0.25, "tiny": 1e-6}),
        ({"enum": Colour.RED, "tuple": (1, 2)}, {"enum": "red", "tuple": [1, 2]}),
        ({"deep": json.loads("[" * 300 + "]" * 300)}, None),
        ({"score": math.nan, "inf": math.inf}, {"score": None, "inf": None}),
    ],
    ids=[
        "plain",
        "floats",
        "text-with-escapes",
        "integers-beyond-64-bits",
        "non-string-keys",
        "numpy-floats",
        "str-enum-and-tuple",
        "deeper-than-orjson-goes",
        "non-finite-as-null",
    ],
)
def test_an_encoded_response_reads_back_as_the_value_sent(result: Any, read_back: Any) -> None:
    encoded = protocol.encode(protocol.success(7, result))
    assert json.loads(encoded) == {"jsonrpc": "2.0", "id": 7, "result": read_back or result}


def test_an_encoded_response_is_compact_utf8() -> None:
    encoded = protocol.encode(protocol.success(1, {"title": "é", "tags": ["a", "b"]}))
    assert encoded == '{"jsonrpc":"2.0","id":1,"result":{"title":"é","tags":["a","b"]}}'.encode()


def test_value_json_cannot_write_is_refused() -> None:
    with pytest.raises(TypeError):
        protocol.encode(protocol.success(1, {"when": object()}))


def test_batch_and_spliced_document_read_back_whole() -> None:
    document = protocol.RawJson.of({"openrpc": "1.3.2", "methods": [{"name": "x", "p": 1e-6}]})
    batch = [protocol.success("a", document), protocol.failure(None, -32600, "Invalid Request")]
    assert json.loads(protocol.encode(batch)) == [
        {"jsonrpc": "2.0", "id": "a", "result": document.value},
        json.loads(protocol.encode(batch[1])),
    ]

"""Response bodies are written byte for byte as the `json` module writes them."""

from __future__ import annotations

import json
import math
from enum import StrEnum
from typing import Any

import numpy as np
import pytest

from a2a.rpc import protocol


def stdlib(value: Any) -> bytes:
    """What the service wrote before orjson: the wire form the contract tests pin."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class Colour(StrEnum):
    RED = "red"


@pytest.mark.parametrize(
    "result",
    [
        {"distance": 0.533019, "confidence": 0.9, "outcome": None, "total": 3, "ok": True},
        [0.0, -0.0, 1e-4, -1e-4, 0.0001234, 1e16, 1.2345e22, 1.7976931348623157e308, 5e-324],
        [1 / 3, 2.0, -0.5, -1e300, True, False, 0, -7],
        [1e-5, 5e-06, 1.5e-07, 3.14159e-09, -2e-05],
        {"title": 'é \u2028 \x00\x1f\x7f "q" \\ / 😀', "tags": ["a", "b"], "nested": [[{}]]},
        {"id": 2**64, "negative": -(2**63) - 1},
        {1: "int key", None: "null key", 2.5: "float key"},
        {"numpy": np.float64(0.25), "tiny numpy": np.float64(1e-6)},
        {"enum": Colour.RED, "tuple": (1, 2)},
        {"deep": json.loads("[" * 300 + "]" * 300)},
    ],
    ids=[
        "plain-result",
        "floats-written-alike",
        "more-numbers",
        "small-floats-in-exponent-form",
        "text-with-escapes",
        "integers-beyond-64-bits",
        "non-string-keys",
        "numpy-floats",
        "str-enum-and-tuple",
        "deeper-than-orjson-goes",
    ],
)
def test_encoded_response_is_byte_for_byte_what_json_writes(result: Any) -> None:
    body = protocol.success(7, result)
    assert protocol.encode(body) == stdlib(body)


@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, np.float64("nan")], ids=["nan", "inf", "-inf", "np-nan"]
)
def test_non_finite_float_in_a_result_is_refused_as_before(bad: float) -> None:
    body = protocol.success(1, {"decisions": [{"distance": 0.5, "score": bad}]})
    with pytest.raises(ValueError):
        stdlib(body)
    with pytest.raises(ValueError):
        protocol.encode(body)


def test_value_json_cannot_write_is_refused_as_before() -> None:
    body = protocol.success(1, {"when": object()})
    with pytest.raises(TypeError):
        protocol.encode(body)


def test_batch_and_spliced_document_are_written_as_json_writes_them() -> None:
    document = protocol.RawJson.of({"openrpc": "1.3.2", "methods": [{"name": "x", "p": 1e-6}]})
    batch = [protocol.success("a", document), protocol.failure(None, -32600, "Invalid Request")]
    expected = stdlib([{**batch[0], "result": document.value}, batch[1]])
    assert protocol.encode(batch) == expected

"""rpc.discover: the OpenRPC document is generated from, and in step with, the method table."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from a2a import __version__
from a2a.app.methods import build_methods
from a2a.docs.catalog import empty_catalog
from a2a.docs.service import DocsSearchService
from a2a.embeddings import Embedder
from a2a.rpc.methods import Method
from a2a.rpc.openrpc import ERRORS, openrpc_document
from a2a.settings import Settings
from tests.conftest import app_client, rpc_call


async def _served(settings: Settings, embedder: Embedder) -> tuple[dict[str, Any], list[str]]:
    async with app_client(settings, embedder) as client:
        document = (await client.post("/cstp", json=rpc_call("rpc.discover"))).json()["result"]
        table = list(client._transport.app.state.cstp.methods)  # type: ignore[attr-defined]
    return document, table


async def test_every_served_method_is_described_and_nothing_else(
    settings: Settings, embedder: Embedder
) -> None:
    document, table = await _served(settings, embedder)
    assert [m["name"] for m in document["methods"]] == table
    assert {"cstp.queryDecisions", "cstp.searchDocs", "rpc.discover"} <= set(table)
    assert document["openrpc"] == "1.3.2" and document["info"]["version"] == __version__


async def test_each_method_lists_params_result_and_error_codes(
    settings: Settings, embedder: Embedder
) -> None:
    document, _ = await _served(settings, embedder)
    for method in document["methods"]:
        assert method["paramStructure"] == "by-name"
        assert method["errors"], method["name"]
        for error in method["errors"]:
            assert error["message"] == ERRORS[error["code"]][0]
        assert method["result"]["schema"].get("type") == "object", method["name"]
        # No dangling references: every schema is inlined from the models' $defs.
        assert "$ref" not in str(method), method["name"]
    search = next(m for m in document["methods"] if m["name"] == "cstp.searchDocs")
    assert {p["name"]: p["required"] for p in search["params"]} == {
        "query": True,
        "max_sections": False,
        "tenant": False,
    }
    assert set(search["result"]["schema"]["required"]) == {
        "sections",
        "docs_covered",
        "suggested_followups",
    }
    assert {e["code"] for e in search["errors"]} == {-32602, -32001, -32002, -32004}


def test_param_schemas_are_the_dispatchers_own_models() -> None:
    methods = build_methods(None, docs=DocsSearchService(empty_catalog()))  # type: ignore[arg-type]
    document = openrpc_document(methods, "0")
    for described in document["methods"]:
        method: Method = methods[described["name"]]
        properties = method.params_model.model_json_schema(by_alias=True).get("properties", {})
        # Every method takes `tenant` as well (CONTRACT.md, Tenants).
        assert [p["name"] for p in described["params"]] == [*properties, "tenant"]


@pytest.mark.parametrize(
    ("code", "data"),
    [(-32602, {"errors": [{"field": "limit", "reason": "x"}]}), (-32002, {"retryAfter": 3})],
    ids=["invalid-params", "rate-limited"],
)
def test_error_data_schemas_accept_what_the_service_sends(code: int, data: Any) -> None:
    schema = ERRORS[code][1]
    assert schema is not None
    jsonschema.validate(data, schema)

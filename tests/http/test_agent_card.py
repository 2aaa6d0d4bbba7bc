"""The A2A Agent Card: one skill per served method, the bearer scheme, auth on or off."""

from __future__ import annotations

import json

import pytest

from a2a.embeddings import Embedder
from a2a.settings import Settings, load_settings
from tests.conftest import app_client


async def test_card_has_one_skill_per_method_with_valid_examples(
    settings: Settings, embedder: Embedder
) -> None:
    async with app_client(settings, embedder) as client:
        card = (await client.get("/.well-known/agent-card.json")).json()
        methods = client._transport.app.state.cstp.methods  # type: ignore[attr-defined]
        for skill in card["skills"]:
            for example in skill["examples"]:
                request = json.loads(example)
                assert (request["jsonrpc"], request["method"]) == ("2.0", skill["id"])
                methods[skill["id"]].validate(request["params"])
                # Runnable as sent; an example may name a record this empty store lacks.
                response = (await client.post("/cstp", content=example)).json()
                assert response.get("error", {}).get("code") not in (-32600, -32601, -32700)
    assert [s["id"] for s in card["skills"]] == list(methods)
    # A2A 1.0 shape: supportedInterfaces and securitySchemes by kind.
    assert card["supportedInterfaces"] == [
        {"url": "http://cstp.test/cstp", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert "securityRequirements" not in card and "protocolVersion" not in card


@pytest.mark.parametrize(
    ("path", "member", "required"),
    [
        (
            "/.well-known/agent-card.json",
            "securityRequirements",
            [{"schemes": {"bearer": {"list": []}}}],
        ),
        ("/.well-known/agent.json", "security", [{"bearer": []}]),
    ],
    ids=["a2a-1.0", "a2a-0.3"],
)
async def test_card_requires_the_bearer_scheme_when_auth_is_on(
    tmp_path: object,
    embedder: Embedder,
    path: str,
    member: str,
    required: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CSTP_AUTH_TOKENS", "planner:s3cret-token")
    settings = load_settings(data_dir=f"{tmp_path}/data")
    async with app_client(settings, embedder) as client:
        response = await client.get(path)
    assert response.status_code == 200
    assert response.json()[member] == required


async def test_older_clients_get_the_0_3_shape_at_agent_json(
    settings: Settings, embedder: Embedder
) -> None:
    async with app_client(settings, embedder) as client:
        card = (await client.get("/.well-known/agent.json")).json()
    assert (card["protocolVersion"], card["url"]) == ("0.3.0", "http://cstp.test/cstp")
    assert card["preferredTransport"] == "JSONRPC"
    assert card["securitySchemes"]["bearer"]["type"] == "http"

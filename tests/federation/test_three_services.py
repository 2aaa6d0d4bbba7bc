"""Federation over three real `cstp serve` processes (CONTRACT.md, Federation): A asks B
(same embedding model) and C (WordLlama, another model); C names A and B back. Around
them: a peer answering garbage (tests.federation.peer_servers.GarbagePeer), a TCP proxy
adding latency in front of B, and B frozen (SIGSTOP) then killed (SIGKILL).

The services start once for the module, concurrently. Tests run in file order: those that
freeze and kill B come last.
"""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.federation.peer_servers import (
    GARBAGE,
    STALE,
    STALE_SINCE,
    GarbagePeer,
    LatencyProxy,
    serving,
)
from tests.servers import free_port, freeze, output_of, start_cstp, stop

pytestmark = pytest.mark.slow

FAST_MODEL = "wordllama-l2-supercat-256"
DEFAULT_MODEL = "all-minilm-l6-v2-int8"
#: Each peer's deadline on A and C (seconds): what a frozen peer costs a call.
PEER_TIMEOUT = 2.0
TESTER = "tester-token-0123456789"
#: The tokens the services send each other and the garbage peer: none may ever show in an
#: answer or a log line.
PEER_TOKENS = {
    "CSTP_PEER_B_TOKEN": "a-to-b-token-0123456789",
    "CSTP_PEER_B_TENANTS_TOKEN": "a-to-b-tenants-token-0123456789",
    "CSTP_PEER_C_TOKEN": "a-to-c-token-0123456789",
    "CSTP_PEER_FAKE_TOKEN": "a-to-fake-token-0123456789",
    "CSTP_PEER_A_TOKEN": "c-to-a-token-0123456789",
    "CSTP_PEER_CB_TOKEN": "c-to-b-token-0123456789",
    "CSTP_PEER_WRONG_TOKEN": "a-to-b-unknown-token-0123456789",
}
QUERY = "billing events on Kafka"

A_DECISIONS = """
- id: a-kafka
  title: Publish billing events to Kafka
  category: architecture
  stakes: high
  tags: [kafka, billing]
- id: a-ledger
  title: Keep the invoice ledger in PostgreSQL
  category: data
  tags: [postgres, billing]
- id: a-tokens
  title: Rotate service API tokens every 90 days
  category: security
  tags: [security]
- id: a-webhooks
  title: Retry failed webhook deliveries with exponential backoff
  category: architecture
  tags: [webhooks]
"""
B_DECISIONS = """
- id: b-kafka
  title: Consume billing events from Kafka with idempotent handlers
  category: architecture
  stakes: high
  tags: [kafka, billing]
- id: b-cache
  title: Cache user sessions in Redis
  category: architecture
  tags: [redis]
- id: b-outbox
  title: Use a transactional outbox for order events
  category: data
  tags: [events]
"""
C_DECISIONS = """
- id: c-kafka
  title: Stream billing events through Kafka topics
  category: architecture
  stakes: high
  tags: [kafka, billing]
- id: c-search
  title: Use OpenSearch for full-text search
  category: library-selection
  tags: [search]
- id: c-flags
  title: Ship new features behind feature flags
  category: process
  tags: [release]
"""
#: B's decisions in its tenants acme and globex (recorded over the protocol).
B_TENANTS = {
    "acme": [{"id": "acme-kafka", "title": "Acme moves billing events to Kafka"}],
    "globex": [
        {"id": "globex-kafka", "title": "Globex moves billing events to Kafka"},
        {"id": "globex-queue", "title": "Globex queues invoice emails in SQS"},
    ],
}


@dataclass
class Services:
    a: str
    b: str
    c: str
    procs: dict[str, Popen[bytes]]
    garbage: GarbagePeer
    proxy: LatencyProxy
    http: httpx.Client

    def post(
        self, url: str, method: str, params: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """One JSON-RPC call as the tester; no peer's token is in what comes back."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        sent = {"Authorization": f"Bearer {TESTER}", **(headers or {})}
        response = self.http.post(f"{url}/cstp", json=body, headers=sent)
        assert response.status_code == 200, response.text
        assert not any(token in response.text for token in PEER_TOKENS.values()), response.text
        return response

    def call(self, url: str, method: str, params: Any, **kw: Any) -> dict[str, Any]:
        answer: dict[str, Any] = self.post(url, method, params, **kw).json()
        return answer

    def result(self, url: str, method: str, params: Any, **kw: Any) -> Any:
        answer = self.call(url, method, params, **kw)
        assert "result" in answer, answer
        return answer["result"]

    def query(self, url: str, **params: Any) -> Any:
        return self.result(url, "cstp.queryDecisions", {"query": QUERY, **params})

    def metrics(self, url: str) -> dict[tuple[str, str], float]:
        """/metrics as (name, labels `k=v,...` sorted) -> value."""
        text = self.http.get(f"{url}/metrics").text
        return {
            (s.name, ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }


def peers_file(path: Path, peers: list[dict[str, str]]) -> Path:
    lines = []
    for peer in peers:
        lines.append("[[peer]]")
        lines.extend(f'{key} = "{value}"' for key, value in peer.items())
    path.write_text("\n".join(lines) + "\n")
    return path


def decisions_folder(folder: Path, text: str) -> Path:
    folder.mkdir()
    (folder / "decisions.yaml").write_text(textwrap.dedent(text))
    return folder


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = tmp_path_factory.mktemp("federation")
    ports = {name: free_port() for name in "abc"}
    url = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    garbage = GarbagePeer()
    proxy = LatencyProxy(ports["b"]).start()
    with serving(garbage.app) as fake:
        a_peers = [
            {"name": "b", "url": url["b"], "token_env": "CSTP_PEER_B_TOKEN"},
            {
                "name": "b-globex",
                "url": url["b"],
                "token_env": "CSTP_PEER_B_TENANTS_TOKEN",
                "tenant": "globex",
            },
            {"name": "b-both", "url": url["b"], "token_env": "CSTP_PEER_B_TENANTS_TOKEN"},
            {"name": "b-again", "url": url["b"], "token_env": "CSTP_PEER_B_TOKEN"},
            {"name": "b-wrong", "url": url["b"], "token_env": "CSTP_PEER_WRONG_TOKEN"},
            {"name": "slow", "url": proxy.url, "token_env": "CSTP_PEER_B_TOKEN"},
            {"name": "c", "url": url["c"], "token_env": "CSTP_PEER_C_TOKEN"},
            *(
                {"name": case, "url": f"{fake}/{case}", "token_env": "CSTP_PEER_FAKE_TOKEN"}
                for case in (*GARBAGE, "stale")
            ),
        ]
        c_peers = [
            {"name": "a", "url": url["a"], "token_env": "CSTP_PEER_A_TOKEN"},
            {"name": "b", "url": url["b"], "token_env": "CSTP_PEER_CB_TOKEN"},
        ]
        tokens = PEER_TOKENS
        common = {**tokens, "CSTP_PEER_TIMEOUT_SECONDS": str(PEER_TIMEOUT)}
        envs = {
            "a": {
                **common,
                "CSTP_AUTH_TOKENS": f"tester:{TESTER}:read,"
                f"c-agent:{tokens['CSTP_PEER_A_TOKEN']}:read",
                "CSTP_PEERS_FILE": str(peers_file(root / "a-peers.toml", a_peers)),
            },
            "b": {
                "CSTP_AUTH_TOKENS": f"tester:{TESTER}:read+write:*,"
                f"a-agent:{tokens['CSTP_PEER_B_TOKEN']}:read,"
                f"a-tenants:{tokens['CSTP_PEER_B_TENANTS_TOKEN']}:read:acme|globex,"
                f"c-agent:{tokens['CSTP_PEER_CB_TOKEN']}:read",
            },
            "c": {
                **common,
                "CSTP_EMBEDDING_MODEL": FAST_MODEL,
                "CSTP_AUTH_TOKENS": f"tester:{TESTER}:read,"
                f"a-agent:{tokens['CSTP_PEER_C_TOKEN']}:read",
                "CSTP_PEERS_FILE": str(peers_file(root / "c-peers.toml", c_peers)),
                "CSTP_RATE_LIMITS": "cstp.findSimilarDecisions=5/minute",
            },
        }
        data = {"a": A_DECISIONS, "b": B_DECISIONS, "c": C_DECISIONS}

        def start(name: str) -> Popen[bytes]:
            env = {**envs[name], "CSTP_DATA_DIR": str(root / f"{name}-data")}
            folder = decisions_folder(root / f"{name}-decisions", data[name])
            return start_cstp(ports[name], env, "--index", str(folder))

        with ThreadPoolExecutor(3) as pool:
            started = dict(zip("abc", pool.map(start, "abc"), strict=True))
        try:
            with httpx.Client(timeout=30, verify=False) as http:
                found = Services(url["a"], url["b"], url["c"], started, garbage, proxy, http)
                for tenant, decisions in B_TENANTS.items():
                    for decision in decisions:
                        params = {"decision": decision, "tenant": tenant}
                        assert found.result(found.b, "cstp.recordDecision", params)["created"]
                yield found
        finally:
            for process in started.values():
                stop(process)
            proxy.close()


def alone(services: Services, url: str, **params: Any) -> list[dict[str, Any]]:
    """A service's own answer to QUERY (semantic), as the tester asks it (B: tenant default)."""
    if url == services.b:
        params = {"tenant": "default", **params}
    return list(services.query(url, retrievalMode="semantic", **params)["decisions"])


def marked(decisions: list[dict[str, Any]], peer: str | None) -> list[dict[str, Any]]:
    return [{**d, "peer": peer} for d in decisions]


def field_errors(answer: dict[str, Any]) -> list[str]:
    assert answer["error"]["code"] == -32602, answer
    return [e["field"] for e in answer["error"]["data"]["errors"]]


def detail(peer: str, decisions: int, **rest: Any) -> dict[str, Any]:
    return {"peer": peer, "status": "successful", "decisions": decisions, **rest}


def without_took(details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for d in details:
        assert isinstance(d["tookMs"], int) and d["tookMs"] >= 0, d
    return [{k: v for k, v in d.items() if k != "tookMs"} for d in details]


# -- what the services say of themselves --------------------------------------------------


def test_each_card_names_its_embedding_model_and_list_peers_compares_them(
    services: Services,
) -> None:
    for url, name, dimensions in ((services.a, DEFAULT_MODEL, 384), (services.c, FAST_MODEL, 256)):
        card = services.http.get(f"{url}/.well-known/agent-card.json").json()
        extensions = card["capabilities"]["extensions"]
        model = [e for e in extensions if e["uri"] == "urn:cstp:embedding-model:v1"]
        assert [m["params"] for m in model] == [{"name": name, "dimensions": dimensions}]

    peers = services.result(services.a, "cstp.listPeers", {})["peers"]
    assert [p["name"] for p in peers][:4] == ["b", "b-globex", "b-both", "b-again"]
    by_name = {p["name"]: p for p in peers}
    minilm = {"name": DEFAULT_MODEL, "dimensions": 384}
    assert by_name["b"] == {
        "name": "b",
        "reachable": True,
        "circuit": "closed",
        "embeddingModel": minilm,
        "sameModel": True,
    }
    assert by_name["c"]["embeddingModel"] == {"name": FAST_MODEL, "dimensions": 256}
    assert by_name["c"]["sameModel"] is False
    # The garbage peer's card is a 404: not reachable, no model, rank merges only.
    assert by_name["html"] == {
        "name": "html",
        "reachable": False,
        "circuit": "closed",
        "embeddingModel": None,
        "sameModel": False,
    }


# -- merges -------------------------------------------------------------------------------


def test_two_services_of_one_model_merge_by_distance(services: Services) -> None:
    ours, theirs = alone(services, services.a), alone(services, services.b, limit=4)
    assert "peer" not in ours[0]  # absent on a call without peers
    found = services.query(services.a, limit=4, peers=["b"])

    # The lists as one, by distance; on a tie ours first, then the peer's; then by id.
    keyed = [(d["distance"], 0, d["id"], d) for d in marked(ours, None)]
    keyed += [(d["distance"], 1, d["id"], d) for d in marked(theirs, "b")]
    expected = [k[3] for k in sorted(keyed, key=lambda k: k[:3])][:4]
    assert found["decisions"] == expected
    assert {d["peer"] for d in found["decisions"]} == {None, "b"}  # both services in the top 4
    assert [d["tenant"] for d in found["decisions"]] == ["default"] * 4
    assert found["merge"] == "distance"
    assert found["total"] == 4
    assert "partial" not in found
    block = found["peers"]
    assert {k: block[k] for k in ("total", "successful", "failed", "skipped")} == {
        "total": 1,
        "successful": 1,
        "failed": 0,
        "skipped": 0,
    }
    assert without_took(block["details"]) == [detail("b", len(theirs))]
    assert list(found)[-2:] == ["peers", "merge"]


def test_another_model_merges_by_rank_keeping_each_distance(services: Services) -> None:
    ours = alone(services, services.a, limit=6)
    c, b = alone(services, services.c, limit=6), alone(services, services.b, limit=6)
    found = services.query(services.a, limit=6, peers=["c", "b"])

    # Reciprocal rank fusion, 1 / (60 + rank) for each service's own order; on a tie this
    # service first, then the peers in the order asked. Distances as each service sent.
    lists = [marked(ours, None), marked(c, "c"), marked(b, "b")]
    fused = [
        (-1 / (60 + rank), order, d["id"], d)
        for order, decisions in enumerate(lists)
        for rank, d in enumerate(decisions, start=1)
    ]
    expected = [k[3] for k in sorted(fused, key=lambda k: k[:3])][:6]
    assert found["decisions"] == expected
    assert [d["id"] for d in found["decisions"]][:3] == [ours[0]["id"], c[0]["id"], b[0]["id"]]
    assert found["merge"] == "rank"
    assert without_took(found["peers"]["details"]) == [detail("c", len(c)), detail("b", len(b))]

    # One model, but keyword mode's scores do not compare across services: rank again.
    keyword = services.query(services.a, limit=3, retrievalMode="keyword", peers=["b"])
    assert keyword["merge"] == "rank"
    assert [d["peer"] for d in keyword["decisions"]] == [None, "b", None]


def test_a_peers_configured_tenant_is_the_one_asked(services: Services) -> None:
    found = services.query(services.a, limit=10, peers=["b-globex"])
    theirs = [d for d in found["decisions"] if d["peer"] == "b-globex"]
    assert sorted(d["id"] for d in theirs) == ["globex-kafka", "globex-queue"]
    assert {d["tenant"] for d in theirs} == {"globex"}  # as the peer named it
    assert {d["tenant"] for d in found["decisions"] if d["peer"] is None} == {"default"}
    # Without `tenant` in the file, the peer's token (two tenants) names none: the peer's
    # own -32602, a failed peer, not a failed call.
    partial = services.query(services.a, peers=["b-both"])
    assert partial["partial"] is True
    assert without_took(partial["peers"]["details"]) == [
        {
            "peer": "b-both",
            "status": "failed",
            "decisions": 0,
            "error": {"code": -32602, "message": "the peer answered error -32602"},
        }
    ]
    assert {d["peer"] for d in partial["decisions"]} == {None}
    # Org-level (`tenant: "*"`, every tenant granted here) with peers: each keeps its own.
    org = services.query(services.a, limit=10, tenant="*", peers=["b-globex"])
    assert {(d["peer"], d["tenant"]) for d in org["decisions"]} == {
        (None, "default"),
        ("b-globex", "globex"),
    }
    # A peer's whole record names the tenant it has there, not ours.
    record = services.result(
        services.a, "cstp.getDecision", {"id": "globex-queue", "peer": "b-globex"}
    )
    assert (record["id"], record["tenant"], record["peer"]) == (
        "globex-queue",
        "globex",
        "b-globex",
    )


# -- hostile peers --------------------------------------------------------------------------


def test_a_peer_answering_garbage_is_failed_with_a_short_reason(services: Services) -> None:
    cases = list(GARBAGE)
    answer = services.call(
        services.a, "cstp.queryDecisions", {"query": QUERY, "limit": 2, "peers": cases}
    )
    found = answer["result"]  # never our -32603: the call stands on our own part
    assert [d["peer"] for d in found["decisions"]] == [None, None]
    assert found["partial"] is True
    assert found["merge"] == "distance"  # this service alone answered
    block = found["peers"]
    assert (block["total"], block["successful"], block["failed"], block["skipped"]) == (
        len(cases),
        0,
        len(cases),
        0,
    )
    got = {d["peer"]: d for d in without_took(block["details"])}
    for case, reason in GARBAGE.items():
        code = {"rpc-error": -32603, "echo-token": -32001}.get(case, -32003)
        assert got[case] == {
            "peer": case,
            "status": "failed",
            "decisions": 0,
            "error": {"code": code, "message": reason},
        }, case
    # A peer that refuses our token (B, not knowing it) is failed too, saying so.
    refused = services.query(services.a, limit=2, peers=["b-wrong"])
    assert without_took(refused["peers"]["details"]) == [
        {
            "peer": "b-wrong",
            "status": "failed",
            "decisions": 0,
            "error": {
                "code": -32003,
                "message": "the peer refused this service's token (HTTP 401)",
            },
        }
    ]
    # Each got our token for it, and sent it back (echo-token): it is nowhere in the answer
    # (checked by Services.post) nor in A's log.
    assert services.garbage.tokens[-len(cases) :] == [PEER_TOKENS["CSTP_PEER_FAKE_TOKEN"]] * len(
        cases
    )
    assert PEER_TOKENS["CSTP_PEER_FAKE_TOKEN"] not in output_of(services.procs["a"])
    # Each call said it came from a peer service: one hop.
    assert services.garbage.federated[-len(cases) :] == ["1"] * len(cases)


def test_a_peers_stale_mark_is_shown_and_its_decisions_name_it(services: Services) -> None:
    found = services.query(services.a, limit=3, peers=["stale"])
    assert without_took(found["peers"]["details"]) == [
        detail("stale", 1, stale={"since": STALE_SINCE})
    ]
    assert "partial" not in found  # stale is an answer
    assert found["merge"] == "rank"  # its card names no model
    [theirs] = [d for d in found["decisions"] if d["peer"] is not None]
    assert theirs == {**STALE, "peer": "stale"}  # our name for it, its tenant
    assert "stale" not in found  # our own part is fresh


# -- bad input ------------------------------------------------------------------------------


def test_bad_peers_params_are_named(services: Services) -> None:
    a = services.a
    unknown = services.call(a, "cstp.queryDecisions", {"query": QUERY, "peers": ["b", "nope"]})
    assert field_errors(unknown) == ["peers[1]"]
    twice = services.call(a, "cstp.queryDecisions", {"query": QUERY, "peers": ["c", "c"]})
    assert field_errors(twice) == ["peers[1]"]
    # B has no peers file.
    none = services.call(
        services.b, "cstp.queryDecisions", {"query": QUERY, "tenant": "default", "peers": ["a"]}
    )
    assert field_errors(none) == ["peers"]
    # A call from a peer never fans out again.
    hop = {"CSTP-Federated": "1"}
    again = services.call(a, "cstp.queryDecisions", {"query": QUERY, "peers": ["b"]}, headers=hop)
    assert field_errors(again) == ["peers"]
    by_id = {"decisionId": "a-kafka", "peers": ["b"]}
    assert field_errors(services.call(a, "cstp.findSimilarDecisions", by_id)) == ["peers"]
    assert field_errors(services.call(a, "cstp.queryDecisions", {"query": QUERY, "peers": []})) == [
        "peers"
    ]
    # The same call without the header is answered: the header alone refused it.
    assert services.query(a, peers=["b"])["peers"]["successful"] == 1


def test_get_decision_reads_a_peers_record(services: Services) -> None:
    a = services.a
    direct = services.result(services.b, "cstp.getDecision", {"id": "b-kafka", "tenant": "default"})
    through = services.result(a, "cstp.getDecision", {"id": "b-kafka", "peer": "b"})
    assert through == {**direct, "peer": "b"}
    assert through["title"] == "Consume billing events from Kafka with idempotent handlers"
    # An id the peer does not have: its -32602 is ours, naming `id`.
    assert field_errors(services.call(a, "cstp.getDecision", {"id": "a-kafka", "peer": "b"})) == [
        "id"
    ]
    assert field_errors(services.call(a, "cstp.getDecision", {"id": "x", "peer": "nope"})) == [
        "peer"
    ]
    hop = {"CSTP-Federated": "1"}
    from_peer = services.call(a, "cstp.getDecision", {"id": "b-kafka", "peer": "b"}, headers=hop)
    assert field_errors(from_peer) == ["peer"]
    # A peer that answers nothing usable: -32003 naming it.
    bad = services.call(a, "cstp.getDecision", {"id": "x", "peer": "html"})
    assert bad["error"]["code"] == -32003
    assert bad["error"]["data"] == {"peer": "html"}


# -- one hop --------------------------------------------------------------------------------


def calls_ok(services: Services, url: str) -> float:
    return services.metrics(url).get(
        ("cstp_rpc_calls_total", "code=ok,method=cstp.queryDecisions"), 0.0
    )


def peer_calls(services: Services, url: str) -> float:
    return sum(
        v for (name, _), v in services.metrics(url).items() if name == "cstp_peer_calls_total"
    )


def test_two_services_naming_each_other_ask_each_other_once(services: Services) -> None:
    a, c = services.a, services.c
    before = {url: (calls_ok(services, url), peer_calls(services, url)) for url in (a, c)}
    found = services.query(a, limit=3, peers=["c"])
    assert found["peers"]["successful"] == 1
    after = {url: (calls_ok(services, url), peer_calls(services, url)) for url in (a, c)}
    # A answered once and asked one peer; C answered once and asked nobody (it names A).
    assert after[a] == (before[a][0] + 1, before[a][1] + 1)
    assert after[c] == (before[c][0] + 1, before[c][1])
    # And the other way round: C asks A, which answers alone.
    back = services.query(c, limit=3, peers=["a"])
    assert back["merge"] == "rank"
    assert without_took(back["peers"]["details"]) == [detail("a", 3)]
    assert peer_calls(services, a) == after[a][1]


# -- rate limits ----------------------------------------------------------------------------


def test_a_call_counts_one_plus_the_peers_asked(services: Services) -> None:
    c = services.c
    params = {"proposal": {"tags": ["kafka", "billing"]}, "limit": 3, "peers": "*"}
    first = services.post(c, "cstp.findSimilarDecisions", params)
    assert "result" in first.json()
    assert first.json()["result"]["merge"] == "rank"
    assert [d["peer"] for d in first.json()["result"]["decisions"]][:3] == [None, "a", "b"]
    assert (first.headers["x-ratelimit-limit"], first.headers["x-ratelimit-remaining"]) == (
        "5",
        "2",
    )
    refused = services.post(c, "cstp.findSimilarDecisions", params)  # 3 more: over 5
    assert refused.json()["error"]["code"] == -32002
    assert refused.headers["x-ratelimit-remaining"] == "2"
    assert int(refused.headers["retry-after"]) >= 1
    one = services.post(c, "cstp.findSimilarDecisions", {**params, "peers": ["a"]})  # 2: fits
    assert one.json()["result"]["peers"]["total"] == 1
    assert one.headers["x-ratelimit-remaining"] == "0"


# -- observability --------------------------------------------------------------------------


def test_metrics_count_peer_calls_by_peer_and_status(services: Services) -> None:
    a = services.a
    before = services.metrics(a)
    services.query(a, limit=2, peers=["b", "html"])
    after = services.metrics(a)

    def grew(name: str, labels: str) -> float:
        return after.get((name, labels), 0.0) - before.get((name, labels), 0.0)

    assert grew("cstp_peer_calls_total", "peer=b,status=successful") == 1
    assert grew("cstp_peer_calls_total", "peer=html,status=failed") == 1
    assert grew("cstp_peer_seconds_count", "peer=b") == 1
    assert grew("cstp_peer_seconds_count", "peer=html") == 1
    assert grew("cstp_peer_calls_total", "peer=c,status=successful") == 0


# -- slow, frozen and dead peers (last: B is frozen, then killed) ---------------------------


def test_a_slow_peer_is_waited_for_up_to_its_deadline(services: Services) -> None:
    services.proxy.delay = 0.2
    found = services.query(services.a, limit=4, peers=["slow"])
    [slow] = found["peers"]["details"]
    assert slow["status"] == "successful"
    assert slow["tookMs"] >= 200
    assert found["merge"] == "distance"  # B's card, read through the proxy too
    # B's answer as it sent it: its first ones, in its order, after the merge's cut.
    theirs = marked(alone(services, services.b, limit=4), "slow")
    kept = [d for d in found["decisions"] if d["peer"] == "slow"]
    assert kept and kept == theirs[: len(kept)]

    services.proxy.delay = 2 * PEER_TIMEOUT
    late = services.query(services.a, limit=4, peers=["slow"])
    [slow] = late["peers"]["details"]
    assert (slow["status"], slow["error"]) == (
        "failed",
        {"code": -32003, "message": f"the peer did not answer in {PEER_TIMEOUT:g} s"},
    )
    assert slow["tookMs"] >= PEER_TIMEOUT * 1000
    assert late["partial"] is True
    services.proxy.delay = 0


def test_a_frozen_peer_costs_its_deadline_then_is_skipped(services: Services) -> None:
    freeze(services.procs["b"].pid)
    # Three calls at once, each waiting out the deadline: three failures in a row.
    with ThreadPoolExecutor(3) as pool:
        answers = list(
            pool.map(lambda _: services.query(services.a, limit=2, peers=["b-again"]), range(3))
        )
    for found in answers:
        [frozen] = found["peers"]["details"]
        assert frozen["status"] == "failed"
        assert frozen["error"] == {
            "code": -32003,
            "message": f"the peer did not answer in {PEER_TIMEOUT:g} s",
        }
        assert frozen["tookMs"] >= PEER_TIMEOUT * 1000
        assert found["partial"] is True
        assert [d["peer"] for d in found["decisions"]] == [None, None]
    # Its circuit is open: skipped, not waited for.
    skipped = services.query(services.a, limit=2, peers=["b-again"])
    assert skipped["peers"] == {
        "total": 1,
        "successful": 0,
        "failed": 0,
        "skipped": 1,
        "details": [{"peer": "b-again", "status": "skipped", "tookMs": 0, "decisions": 0}],
    }
    assert skipped["partial"] is True


def test_a_dead_peer_fails_at_once(services: Services) -> None:
    b = services.procs["b"]
    b.send_signal(signal.SIGKILL)  # frozen or not
    b.wait()
    found = services.query(services.a, limit=2, peers=["b", "c"])
    b_detail, c_detail = found["peers"]["details"]
    assert (b_detail["status"], b_detail["error"]) == (
        "failed",
        {"code": -32003, "message": "the peer cannot be reached (connection failed)"},
    )
    assert c_detail["status"] == "successful"
    assert found["partial"] is True
    gone = services.call(services.a, "cstp.getDecision", {"id": "b-kafka", "peer": "b"})
    assert gone["error"]["code"] == -32003
    assert gone["error"]["data"] == {"peer": "b"}
    # Two failures in a row leave b's circuit closed; b-again's stays open after the
    # freeze (until a try succeeds).
    peers = {p["name"]: p for p in services.result(services.a, "cstp.listPeers", {})["peers"]}
    assert [(peers[n]["reachable"], peers[n]["circuit"]) for n in ("b", "b-again", "c")] == [
        (False, "closed"),
        (False, "open"),
        (True, "closed"),
    ]


def test_no_token_is_ever_logged(services: Services) -> None:
    for name in ("a", "c"):
        log = output_of(services.procs[name])
        assert log  # the services did log
        for token in (*PEER_TOKENS.values(), TESTER):
            assert token not in log, (name, token)

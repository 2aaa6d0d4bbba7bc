"""Issue 25 over real parts: bounded text, the value cap's field, stale reads while a
`chroma run` server is away (CONTRACT.md section Availability of reads and the honesty of
writes). One Chroma server and one `cstp serve` for the module; the outage test is last."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.decisions.wire import FAST_MODEL, TOKENS, call
from tests.servers import cstp_on_chroma_server, freeze, stop


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    env = {
        "CSTP_EMBEDDING_MODEL": FAST_MODEL,
        "CSTP_AUTH_TOKENS": TOKENS,
        "CSTP_CHROMA_TIMEOUT_SECONDS": "2",
    }
    with cstp_on_chroma_server(tmp_path_factory.mktemp("availability"), env) as served:
        yield served


def _field(answer: dict[str, Any]) -> str:
    assert answer["error"]["code"] == -32602, answer
    return str(answer["error"]["data"]["errors"][0]["field"])


@pytest.mark.parametrize(
    ("decision", "field"),
    [
        ({"context": "x" * 10_001}, "decision.context"),
        ({"decision": "x" * 10_001}, "decision.decision"),
        (
            {
                "reasons": [{"type": "analysis", "text": "ok"}] * 3
                + [{"type": "analysis", "text": "x" * 1_001}]
            },
            "decision.reasons[3].text",
        ),
        ({"tags": ["ok", "x" * 65]}, "decision.tags[1]"),
        ({"tags": [""]}, "decision.tags[0]"),
        ({"tags": ["t"] * 10_000}, "decision.tags"),
    ],
)
def test_text_past_its_bound_is_refused_naming_the_field(
    stack: tuple[str, Any], decision: dict[str, Any], field: str
) -> None:
    """Issue 25 edges 3 and 6: a 990,000-character context was stored, and a 10,000-element
    list was refused as `params`."""
    url, _ = stack
    answer = call(url, "cstp.recordDecision", {"decision": {"title": "Bounded", **decision}})
    assert _field(answer) == field


def test_text_at_its_bound_is_stored(stack: tuple[str, Any]) -> None:
    url, _ = stack
    decision = {
        "title": "At the bounds",
        "context": "c" * 10_000,
        "decision": "d" * 10_000,
        "reasons": [{"type": "analysis", "text": "r" * 1_000}],
        "tags": ["t" * 64],
    }
    answer = call(url, "cstp.recordDecision", {"decision": decision})
    assert answer["result"]["created"] is True, answer


def test_a_frozen_chroma_gives_stale_reads_and_minus_32003_never_minus_32005(
    stack: tuple[str, Any],
) -> None:
    """Issue 25 edge 5: with Chroma SIGSTOPped, concurrent calls got -32005 (the worker
    threads all held by hung Chroma calls). Now reads answer stale and the rest -32003."""
    url, chroma = stack
    assert call(url, "cstp.recordDecision", {"decision": {"title": "Before the freeze"}})["result"][
        "created"
    ]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("cstp.queryDecisions", {"query": "freeze"}),
        ("cstp.recordDecision", {"decision": {"title": "During the freeze"}}),
        ("cstp.getDecision", {"id": "stale-none"}),
        ("cstp.listDecisions", {}),
    ] * 6
    answers: list[tuple[str, dict[str, Any]]] = []
    freeze(chroma.pid)
    try:
        with ThreadPoolExecutor(len(calls)) as pool:
            answers = list(
                zip(
                    [m for m, _ in calls],
                    pool.map(lambda c: call(url, c[0], c[1]), calls),
                    strict=True,
                )
            )
    finally:
        os.kill(chroma.pid, signal.SIGCONT)
    for method, answer in answers:
        if method in ("cstp.queryDecisions", "cstp.listDecisions"):
            assert "since" in answer["result"]["stale"], (method, answer)
        else:
            assert answer["error"]["code"] == -32003, (method, answer)


def test_every_kind_of_call_under_a_frozen_chroma_gets_minus_32003_never_minus_32005(
    stack: tuple[str, Any],
) -> None:
    """A call that waits on Chroma several times in a row (a write's read, write and
    read-back; an update's reads; a retry's marker change) ends by one deadline
    (a2a.store.deadlines) with -32003; reads answer stale. After the thaw every kind works again
    (no batch inherits a caller's spent deadline). Durations: bench/break_it.py --only freeze."""
    url, chroma = stack
    for n in range(4):
        decision = {"id": f"dl-{n}", "title": f"Deadline {n}"}
        assert call(url, "cstp.recordDecision", {"decision": decision})["result"]["created"]
    writes: list[tuple[str, dict[str, Any]]] = []
    for n in range(4):
        writes += [
            ("cstp.recordDecision", {"decision": {"id": f"dl-{n}", "title": f"Deadline {n}"}}),
            ("cstp.recordDecision", {"decision": {"title": "Linked", "relatedTo": [f"dl-{n}"]}}),
            (
                "cstp.updateDecision",
                {"id": f"dl-{n}", "changes": {"confidence": 0.4}, "reason": "r"},
            ),
            ("cstp.reviewDecision", {"id": f"dl-{n}", "outcome": "success"}),
            ("cstp.deleteDecision", {"id": f"dl-{n}", "reason": "frozen"}),
            ("cstp.getDecision", {"id": f"dl-{n}"}),
        ]
    reads: list[tuple[str, dict[str, Any]]] = [("cstp.listDecisions", {"limit": 5})] * 4
    calls = writes + reads
    freeze(chroma.pid)
    try:
        with ThreadPoolExecutor(len(calls)) as pool:
            answers = list(pool.map(lambda c: call(url, c[0], c[1]), calls))
    finally:
        os.kill(chroma.pid, signal.SIGCONT)
    for (method, _), answer in zip(calls, answers, strict=True):
        if (method, {"limit": 5}) in reads:
            assert "since" in answer["result"]["stale"], (method, answer)
        else:
            assert answer["error"]["code"] == -32003, (method, answer)
    after = [
        ("cstp.recordDecision", {"decision": {"id": "dl-after", "title": "After the thaw"}}),
        ("cstp.updateDecision", {"id": "dl-0", "changes": {"confidence": 0.6}, "reason": "r"}),
        ("cstp.reviewDecision", {"id": "dl-1", "outcome": "failure"}),
        ("cstp.getDecision", {"id": "dl-after"}),
        ("cstp.deleteDecision", {"id": "dl-2", "reason": "thawed"}),
    ]
    for method, params in after:
        assert "result" in call(url, method, params), method


def test_reads_answer_stale_while_chroma_is_away_and_writes_refuse(
    stack: tuple[str, Any],
) -> None:
    """While Chroma is down the four reads answer from the index, marked stale; writes and
    getDecision get -32003 (was: every read -32003)."""
    url, chroma = stack
    record = {"id": "stale-1", "title": "Queue the invoice exports", "confidence": 0.7}
    assert call(url, "cstp.recordDecision", {"decision": record})["result"]["created"] is True
    reads: list[tuple[str, dict[str, Any]]] = [
        ("cstp.queryDecisions", {"query": "invoice exports"}),
        ("cstp.listDecisions", {}),
        ("cstp.getCalibration", {}),
        ("cstp.findSimilarDecisions", {"decisionId": "stale-1"}),
    ]
    fresh = {method: call(url, method, params) for method, params in reads}
    for method, answer in fresh.items():
        assert "stale" not in answer["result"], (method, answer)
    stop(chroma)
    assert chroma.returncode is not None
    for method, params in reads:
        answer = call(url, method, params)
        assert "result" in answer, (method, answer)
        since = answer["result"]["stale"]["since"]
        assert since.endswith("Z") and since[:4].isdigit(), answer
        without = {k: v for k, v in answer["result"].items() if k not in ("stale", "queryTimeMs")}
        wanted = {k: v for k, v in fresh[method]["result"].items() if k != "queryTimeMs"}
        assert without == wanted, method
    assert call(url, "cstp.getDecision", {"id": "stale-1"})["error"]["code"] == -32003
    write = call(url, "cstp.recordDecision", {"decision": {"title": "During the outage"}})
    assert write["error"]["code"] == -32003

    ready = httpx.get(f"{url}/ready", timeout=10)
    assert (ready.status_code, ready.json()["reason"]) == (503, "serving stale")
    metrics = httpx.get(f"{url}/metrics", timeout=10).text
    line = next(x for x in metrics.splitlines() if x.startswith("cstp_stale_reads_since "))
    assert float(line.split()[1]) > 0

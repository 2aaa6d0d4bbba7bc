"""Break-it pass of issue 25: outage under load, kill -9 under writes, freeze, fuzz.

Real parts only, all on 127.0.0.1: `chroma run` servers and `cstp serve` processes started
here (tests/servers.py), killed, frozen (SIGSTOP) and restarted by signal. Bounded in count
and time; prints one JSON object per part and a summary table.

    .venv/bin/python bench/break_it.py                  # all four parts, ~3 minutes
    .venv/bin/python bench/break_it.py --only freeze    # outage | kill9 | freeze | fuzz

Parts (docs/availability.md has the numbers of the last run):
- outage: 4 clients query and write while the Chroma server is killed (SIGKILL) and
  restarted on the same folder and port; every write refused (-32003) is retried after
  the restart until acknowledged. Counts acknowledged writes, those lost or invisible
  afterwards (getDecision, listDecisions), reads by kind (fresh, stale, error) and fresh
  answers to reads made wholly while Chroma was down (unmarked stale: must be 0).
- kill9: writers against `cstp serve` on an embedded store; the service is killed with
  SIGKILL mid-load and restarted, 3 rounds. Counts acknowledged writes, lost, invisible
  after retry.
- freeze: Chroma SIGSTOPped for `--freeze-seconds` while clients call every kind of
  method; counts answers by code (-32005 must be 0) and the longest call against
  CSTP_CHROMA_TIMEOUT_SECONDS (the contract: at most the timeout + 1 s).
- fuzz: `--bodies` random bodies (JSON of random shape, mutated envelopes, junk bytes)
  to /cstp and /mcp; counts 5xx and -32603.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.servers import free_port, start_chroma, start_cstp, stop

MODEL = "wordllama-l2-supercat-256"
TOKEN = "writer-token-0123456789"
TOKENS = f"planner:{TOKEN}:read+write"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
_IDS = itertools.count(1)
#: `created` of each write acknowledged by write_until_acked (False: stored before).
created_by_retry: list[bool] = []


def rpc(
    client: httpx.Client, url: str, method: str, params: Any, timeout: float = 60
) -> tuple[int | None, dict[str, Any] | None, float]:
    """(error code or None, result or None, seconds); code 0 when no HTTP answer came."""
    body = {"jsonrpc": "2.0", "id": next(_IDS), "method": method, "params": params}
    started = time.monotonic()
    try:
        answer = client.post(f"{url}/cstp", json=body, headers=HEADERS, timeout=timeout).json()
    except (httpx.HTTPError, ValueError):
        return 0, None, time.monotonic() - started
    took = time.monotonic() - started
    if "error" in answer:
        return int(answer["error"]["code"]), None, took
    return None, answer["result"], took


def service_env(folder: Path, chroma_port: int | None, **extra: str) -> dict[str, str]:
    env = {
        "CSTP_EMBEDDING_MODEL": MODEL,
        "CSTP_AUTH_TOKENS": TOKENS,
        "CSTP_DATA_DIR": str(folder / "data"),
        **extra,
    }
    if chroma_port is not None:
        env["CSTP_CHROMA_URL"] = f"http://127.0.0.1:{chroma_port}"
    return env


@contextmanager
def stack(
    folder: Path, with_chroma: bool = True, **extra: str
) -> Iterator[tuple[str, subprocess.Popen[bytes] | None, int]]:
    """A Chroma server (optional) and one `cstp serve`: (url, chroma, chroma port)."""
    chroma_port = free_port()
    chroma = start_chroma(folder / "chroma", chroma_port) if with_chroma else None
    port = free_port()
    server = start_cstp(port, service_env(folder, chroma_port if with_chroma else None, **extra))
    try:
        yield f"http://127.0.0.1:{port}", chroma, chroma_port
    finally:
        stop(server)
        if chroma is not None:
            if chroma.poll() is None:
                os.kill(chroma.pid, signal.SIGCONT)
            stop(chroma)


def write_until_acked(
    client: httpx.Client, url: str, decision: dict[str, Any], give_up_at: float
) -> tuple[bool, int]:
    """Record `decision` (it has an id), retrying -32003 and no-answer until acknowledged
    or `give_up_at`; (acknowledged, retries). A retry of a write the store had kept
    already is acknowledged too (`created: false`): see `created_by_retry`."""
    for attempt in itertools.count():
        code, result, _ = rpc(client, url, "cstp.recordDecision", {"decision": decision})
        if code is None and result is not None:
            created_by_retry.append(bool(result["created"]))
            return True, attempt
        if code not in (0, -32003, -32005) or time.monotonic() > give_up_at:
            return False, attempt
        time.sleep(0.2)
    raise AssertionError("unreachable")


def visible(client: httpx.Client, url: str, ids: list[str]) -> tuple[int, int]:
    """(ids getDecision cannot find, ids listDecisions does not list), retrying -32003."""
    missing = unlisted = 0
    listed: set[str] = set()
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        code, result, _ = rpc(client, url, "cstp.listDecisions", params)
        if result is None:
            time.sleep(0.5)
            continue
        listed.update(d["id"] for d in result["decisions"])
        cursor = result.get("nextCursor")
        if not cursor:
            break
    for record_id in ids:
        code, result, _ = rpc(client, url, "cstp.getDecision", {"id": record_id})
        while code == -32003:
            time.sleep(0.5)
            code, result, _ = rpc(client, url, "cstp.getDecision", {"id": record_id})
        missing += result is None
        unlisted += record_id not in listed
    return missing, unlisted


# -- (a) outage under load ------------------------------------------------------------------


def outage(folder: Path, seconds: float) -> dict[str, Any]:
    env = {"CSTP_CHROMA_TIMEOUT_SECONDS": "2"}
    acked: list[str] = []
    refused: list[dict[str, Any]] = []
    reads: Counter[str] = Counter()
    # (started, ended, fresh) of each read answered: a fresh one wholly inside the outage
    # would be an unmarked stale answer.
    answered: list[tuple[float, float, bool]] = []
    stop_at = [time.monotonic() + 1e9]
    lock = threading.Lock()
    with stack(folder, **env) as (url, chroma, chroma_port):
        assert chroma is not None

        def client_loop(n: int) -> None:
            with httpx.Client() as client:
                for k in itertools.count():
                    if time.monotonic() > stop_at[0]:
                        return
                    if k % 2:
                        started = time.monotonic()
                        code, result, _ = rpc(
                            client, url, "cstp.queryDecisions", {"query": "outage write"}
                        )
                        fresh = result is not None and "stale" not in result
                        kind = (
                            f"error {code}" if result is None else ("fresh" if fresh else "stale")
                        )
                        with lock:
                            reads[kind] += 1
                            if result is not None:
                                answered.append((started, time.monotonic(), fresh))
                        continue
                    decision = {"id": f"out-{n}-{k}", "title": f"Outage write {n} {k}"}
                    code, result, _ = rpc(
                        client, url, "cstp.recordDecision", {"decision": decision}
                    )
                    with lock:
                        (acked if result is not None else refused).append(
                            decision["id"] if result is not None else decision
                        )
                    if result is None:
                        time.sleep(0.1)

        threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(seconds / 3)
        chroma.kill()
        chroma.wait()
        killed_at = time.monotonic()
        time.sleep(seconds / 3)
        restarted = start_chroma(folder / "chroma", chroma_port)
        up_at = time.monotonic()
        try:
            time.sleep(seconds / 3)
            stop_at[0] = time.monotonic()
            for thread in threads:
                thread.join()
            retried = []
            with httpx.Client() as client:
                for decision in refused:
                    ok, _ = write_until_acked(client, url, decision, time.monotonic() + 60)
                    if ok:
                        retried.append(decision["id"])
                lost, unlisted = visible(client, url, acked + retried)
        finally:
            stop(restarted)
    unmarked = sum(1 for s, e, fresh in answered if fresh and s > killed_at and e < up_at)
    return {
        "part": "outage",
        "chroma_down_seconds": round(up_at - killed_at, 1),
        "acked_writes": len(acked),
        "refused_writes": len(refused),
        "refused_then_acked_on_retry": len(retried),
        "lost": lost,
        "invisible_in_list": unlisted,
        "reads": dict(reads),
        "fresh_answers_while_down": unmarked,
    }


# -- (b) kill -9 of the service under writes ------------------------------------------------


def kill9(folder: Path, rounds: int, seconds: float) -> dict[str, Any]:
    env = service_env(folder, None)
    acked: list[str] = []
    retried: list[str] = []
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    lock = threading.Lock()
    results = []
    for round_ in range(rounds):
        server = start_cstp(port, env)
        unanswered: list[dict[str, Any]] = []
        stop_at = [time.monotonic() + 1e9]

        def writer(
            n: int,
            round_: int = round_,
            unanswered: list[Any] = unanswered,
            stop_at: list[float] = stop_at,
        ) -> None:
            with httpx.Client() as client:
                for k in itertools.count():
                    if time.monotonic() > stop_at[0]:
                        return
                    decision = {"id": f"k9-{round_}-{n}-{k}", "title": f"Kill write {n} {k}"}
                    code, result, _ = rpc(
                        client, url, "cstp.recordDecision", {"decision": decision}
                    )
                    with lock:
                        if result is not None:
                            acked.append(decision["id"])
                        else:
                            unanswered.append(decision)
                    if code == 0:
                        return  # the service is gone

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(seconds * random.uniform(0.5, 1.0))
        server.send_signal(signal.SIGKILL)
        server.wait()
        stop_at[0] = time.monotonic()
        for thread in threads:
            thread.join()
        server = start_cstp(port, env)
        created_by_retry.clear()
        try:
            with httpx.Client() as client:
                for decision in unanswered:
                    ok, _ = write_until_acked(client, url, decision, time.monotonic() + 60)
                    if ok:
                        retried.append(decision["id"])
                lost, unlisted = visible(client, url, acked + retried)
        finally:
            stop(server)
        results.append(
            {
                "unanswered": len(unanswered),
                "stored_before_kill": created_by_retry.count(False),
                "lost": lost,
                "invisible": unlisted,
            }
        )
    return {
        "part": "kill9",
        "rounds": rounds,
        "acked_writes": len(acked),
        "retried_writes": len(retried),
        "lost_or_invisible_by_round": results,
    }


# -- (c) freeze ------------------------------------------------------------------------------


def freeze(folder: Path, seconds: float, timeout: float, clients: int) -> dict[str, Any]:
    env = {"CSTP_CHROMA_TIMEOUT_SECONDS": f"{timeout:g}", "CSTP_STALE_READS_SECONDS": "300"}
    codes: Counter[str] = Counter()
    longest: dict[str, float] = {}
    lock = threading.Lock()
    with stack(folder, **env) as (url, chroma, _):
        assert chroma is not None
        with httpx.Client() as client:
            for n in range(clients):
                rpc(
                    client,
                    url,
                    "cstp.recordDecision",
                    {"decision": {"id": f"fz-{n}", "title": "Pre"}},
                )
        calls: list[tuple[str, Callable[[int, int], Any]]] = [
            ("cstp.recordDecision", lambda n, k: {"decision": {"id": f"fz-{n}-{k}", "title": "F"}}),
            ("cstp.getDecision", lambda n, k: {"id": f"fz-{n}"}),
            (
                "cstp.updateDecision",
                lambda n, k: {"id": f"fz-{n}", "changes": {"confidence": 0.5}, "reason": "fz"},
            ),
            ("cstp.reviewDecision", lambda n, k: {"id": f"fz-{n}", "outcome": "success"}),
            ("cstp.queryDecisions", lambda n, k: {"query": "frozen"}),
            ("cstp.listDecisions", lambda n, k: {"limit": 5}),
            (
                "cstp.recordDecision",
                lambda n, k: {
                    "decision": {"id": f"fl-{n}-{k}", "title": "Linked", "relatedTo": [f"fz-{n}"]}
                },
            ),
            ("cstp.deleteDecision", lambda n, k: {"id": f"fz-{n}-{k - 7}", "reason": "fz"}),
        ]
        thawed = threading.Event()

        def client_loop(n: int) -> None:
            with httpx.Client() as client:
                for k in itertools.count():
                    if thawed.is_set():
                        return
                    method, params = calls[(k + n) % len(calls)]
                    code, result, took = rpc(client, url, method, params(n, k))
                    key = "ok" if code is None else str(code)
                    if result is not None and "stale" in result:
                        key = "stale"
                    with lock:
                        codes[key] += 1
                        longest[method] = max(longest.get(method, 0.0), took)

        threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        time.sleep(1)  # calls in flight when it freezes
        os.kill(chroma.pid, signal.SIGSTOP)
        time.sleep(seconds)
        thawed.set()
        for thread in threads:
            thread.join()
        os.kill(chroma.pid, signal.SIGCONT)
    worst = max(longest.values())
    return {
        "part": "freeze",
        "chroma_timeout_seconds": timeout,
        "frozen_seconds": seconds,
        "clients": clients,
        "answers": dict(codes),
        "minus_32005": codes.get("-32005", 0),
        "longest_call_seconds": round(worst, 2),
        "longest_minus_timeout_seconds": round(worst - timeout, 2),
        "longest_by_method": {m: round(s, 2) for m, s in sorted(longest.items())},
    }


# -- (d) fuzz --------------------------------------------------------------------------------

METHODS = [
    "cstp.recordDecision",
    "cstp.queryDecisions",
    "cstp.getDecision",
    "cstp.listDecisions",
    "cstp.reviewDecision",
    "cstp.updateDecision",
    "cstp.deleteDecision",
    "cstp.findSimilarDecisions",
    "cstp.getCalibration",
    "cstp.getStats",
    "cstp.checkDrift",
    "rpc.discover",
]
KEYS = [
    "decision", "query", "id", "filters", "limit", "cursor", "title", "confidence", "tags",
    "reasons", "changes", "reason", "outcome", "context", "category", "stakes", "status",
    "supersedes", "relatedTo", "decisionId", "recentDays", "groupBy", "bins", "mode", "x",
]  # fmt: skip


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["int", "float", "str", "bool", "null", "big"]
    if depth < 4:
        kinds += ["list", "dict", "dict"]
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, -1, 1, 2**31, -(2**63), 10**30, rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, -0.0, 1e308, -1e-308, rng.random()])
    if kind == "str":
        return "".join(
            rng.choice("aZ09 _-.:/\\\"'\u00e9\u4e2d\U0001f600\x00")
            for _ in range(rng.randint(0, 30))
        )
    if kind == "big":
        return "x" * rng.choice([1_000, 10_001, 100_000])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def random_body(rng: random.Random, door: str) -> bytes:
    roll = rng.random()
    if roll < 0.05:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    if roll < 0.15:
        return json.dumps(random_value(rng)).encode()
    if door == "/mcp":
        method = rng.choice(["tools/call", "tools/list", "initialize", "ping", "x"])
        params: Any = {"name": rng.choice(METHODS).split(".")[-1], "arguments": random_value(rng)}
        if rng.random() < 0.3:
            params = random_value(rng)
    else:
        method = rng.choice(METHODS)
        params = (
            random_value(rng)
            if rng.random() < 0.3
            else {rng.choice(KEYS): random_value(rng) for _ in range(rng.randint(1, 4))}
        )
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": rng.randint(0, 10**6), "method": method}
    envelope["params"] = params
    for key in list(envelope):
        if rng.random() < 0.05:
            envelope[key] = random_value(rng)
    text = json.dumps(envelope)
    if rng.random() < 0.05:
        cut = rng.randint(0, len(text))
        text = text[:cut]
    return text.encode()


def codes_in(reply: Any) -> list[int]:
    items = reply if isinstance(reply, list) else [reply]
    found = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("error"), dict):
            found.append(item["error"].get("code"))
    return found


def fuzz(folder: Path, bodies: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    statuses: Counter[int] = Counter()
    errors: Counter[int] = Counter()
    internal = 0
    samples: list[str] = []
    with stack(folder) as (url, _, _):
        headers = {
            **HEADERS,
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        with httpx.Client(timeout=60) as client:
            for n in range(bodies):
                door = "/cstp" if n % 2 == 0 else "/mcp"
                body = random_body(rng, door)
                response = client.post(f"{url}{door}", content=body, headers=headers)
                statuses[response.status_code] += 1
                try:
                    reply = response.json()
                except ValueError:
                    reply = None
                errors.update(codes_in(reply))
                if response.status_code >= 500 or -32603 in codes_in(reply):
                    internal += response.status_code < 500
                    if len(samples) < 5:
                        samples.append(f"{door} {body[:200]!r} -> {response.text[:200]}")
    return {
        "part": "fuzz",
        "bodies": bodies,
        "seed": seed,
        "http_statuses": dict(sorted(statuses.items())),
        "error_codes": dict(sorted(errors.items())),
        "http_5xx": sum(v for k, v in statuses.items() if k >= 500),
        "minus_32603": internal,
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["outage", "kill9", "freeze", "fuzz"], action="append")
    parser.add_argument("--outage-seconds", type=float, default=15)
    parser.add_argument("--kill-rounds", type=int, default=3)
    parser.add_argument("--kill-seconds", type=float, default=4)
    parser.add_argument("--freeze-seconds", type=float, default=10)
    parser.add_argument("--timeout", type=float, default=2, help="CSTP_CHROMA_TIMEOUT_SECONDS")
    parser.add_argument("--clients", type=int, default=12, help="concurrent clients (freeze)")
    parser.add_argument("--bodies", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    parts = args.only or ["outage", "kill9", "freeze", "fuzz"]
    random.seed(args.seed)
    for part in parts:
        with tempfile.TemporaryDirectory(prefix=f"break-it-{part}-") as tmp:
            folder = Path(tmp)
            started = time.monotonic()
            if part == "outage":
                found = outage(folder, args.outage_seconds)
            elif part == "kill9":
                found = kill9(folder, args.kill_rounds, args.kill_seconds)
            elif part == "freeze":
                found = freeze(folder, args.freeze_seconds, args.timeout, args.clients)
            else:
                found = fuzz(folder, args.bodies, args.seed)
            found["wall_seconds"] = round(time.monotonic() - started, 1)
            print(json.dumps(found), flush=True)


if __name__ == "__main__":
    main()

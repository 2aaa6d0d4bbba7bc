"""Load a real `cstp serve` with the two floods of issue 10 and report what the service did.

    python bench/flood.py keys  [--clients 4] [--seconds 10]
        Each client posts a 60,000-unknown-key params object in a loop; a prober GETs
        /health every 20 ms. Reports /health p50/p95 (ms) during the flood and, as the floor,
        for the same number of probes before it (ratio = flood p50 / floor p50).

    python bench/flood.py batch [--clients 80] [--batch 50] [--corpus DIR]
        Each client posts one batch of `--batch` cstp.queryDecisions calls, all at once.
        Reports the count of each outcome code (-32003 must be 0: Chroma is fine; -32005 is
        the honest answer when the worker queue is full) and /health p50 meanwhile.

The server runs in its own process on 127.0.0.1 (an embedded store in a temp folder,
indexed from `--corpus` when given), with its default settings unless CSTP_* variables say
otherwise. Bounded: every client stops after `--seconds` or its one batch.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers import cstp, free_port, start_cstp, stop


async def probe(client: httpx.AsyncClient, url: str, until: asyncio.Event) -> list[float]:
    """/health wall times in milliseconds, one probe every 20 ms until `until` is set."""
    times = []
    while not until.is_set():
        started = time.perf_counter()
        response = await client.get(f"{url}/health")
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
        await asyncio.sleep(0.02)
    return times


async def floor(client: httpx.AsyncClient, url: str, probes: int = 100) -> list[float]:
    times = []
    for _ in range(probes):
        started = time.perf_counter()
        await client.get(f"{url}/health")
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.02)
    return times


def keys_body(keys: int = 60_000) -> bytes:
    params = {f"k{n}": 0 for n in range(keys)}
    call = {"jsonrpc": "2.0", "id": 1, "method": "cstp.queryDecisions", "params": params}
    return json.dumps(call).encode()


def _flood_keys(url: str, clients: int, seconds: float, sent: Any) -> None:
    """In a process of its own: `clients` posting the 60,000-key body for `seconds`."""
    body = keys_body()

    async def client(until: float) -> None:
        async with httpx.AsyncClient(timeout=60) as own:
            while time.monotonic() < until:
                reply = (await own.post(f"{url}/cstp", content=body)).json()
                code = str(reply.get("error", {}).get("code", "ok"))
                sent[code] = sent.get(code, 0) + 1

    async def flood() -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(*(client(until) for _ in range(clients)))

    asyncio.run(flood())


async def keys_flood(url: str, clients: int, seconds: float) -> dict[str, object]:
    # The flooding clients run in another process, so the prober's times are the server's,
    # not those of a load generator sharing its event loop.
    with multiprocessing.Manager() as manager:
        sent = manager.dict()
        flooder = multiprocessing.Process(target=_flood_keys, args=(url, clients, seconds, sent))
        done = asyncio.Event()
        async with httpx.AsyncClient(timeout=60) as prober:
            base = await floor(prober, url)
            flooder.start()
            probing = asyncio.create_task(probe(prober, url, done))
            await asyncio.to_thread(flooder.join)
            done.set()
            times = await probing
        requests = dict(sent)
    return {
        "scenario": f"{clients} clients x 60,000-key body for {seconds:g} s",
        "body_bytes": len(keys_body()),
        "requests": requests,
        "health_p50_ms": round(statistics.median(times), 2),
        "health_p95_ms": round(statistics.quantiles(times, n=20)[-1], 2),
        "floor_p50_ms": round(statistics.median(base), 2),
        "ratio_p50": round(statistics.median(times) / statistics.median(base), 2),
    }


async def batch_flood(url: str, clients: int, size: int) -> dict[str, object]:
    codes = Counter[str]()
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=clients + 1)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:

        async def one(n: int) -> None:
            batch = [
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "cstp.queryDecisions",
                    "params": {"query": f"database migration {n} {i}"},
                }
                for i in range(size)
            ]
            for reply in (await client.post(f"{url}/cstp", json=batch)).json():
                codes[str(reply.get("error", {}).get("code", "ok"))] += 1

        async with httpx.AsyncClient(timeout=60) as prober:
            probing = asyncio.create_task(probe(prober, url, done))
            started = time.perf_counter()
            await asyncio.gather(*(one(n) for n in range(clients)))
            elapsed = time.perf_counter() - started
            done.set()
            times = await probing
    return {
        "scenario": f"{clients} clients x batch of {size} queries",
        "calls": sum(codes.values()),
        "codes": dict(codes),
        "store_unavailable_32003": codes["-32003"],
        "saturated_32005": codes["-32005"],
        "seconds": round(elapsed, 1),
        "health_p50_ms": round(statistics.median(times), 2) if times else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", choices=["keys", "batch"])
    parser.add_argument("--clients", type=int)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--corpus", type=Path, help="index this folder before serving")
    parser.add_argument(
        "--data-dir", type=Path, help="store folder to keep and reuse (default: a temp one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cstp-flood-") as temporary:
        folder = str(args.data_dir or temporary)
        port = free_port()
        # CSTP_* variables of the caller reach the server, data dir and log level aside.
        env = {"CSTP_DATA_DIR": folder, "CSTP_LOG_LEVEL": "warning"}
        if args.corpus:
            # Indexed beforehand, without the server's start-up wait bound (a loaded box is slow).
            cstp("index", str(args.corpus), env=env, timeout=3600)
        server = start_cstp(port, env)
        url = f"http://127.0.0.1:{port}"
        try:
            if args.scenario == "keys":
                report = asyncio.run(keys_flood(url, args.clients or 4, args.seconds))
            else:
                report = asyncio.run(batch_flood(url, args.clients or 80, args.batch))
        finally:
            stop(server)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""RSS of a real `cstp serve` under read-only traffic of distinct query texts (issue 44, item 6).

Starts `cstp serve --index examples/decisions` on 127.0.0.1 in a fresh data folder (the
embedded default store, the default model unless `--model`), waits for /ready, then sends
`--queries` cstp.queryDecisions calls, each with a query text never sent before (a
generated query and a serial number), from `--clients` concurrent keep-alive clients. After
a warm-up of `--warmup` calls and then every `--every` calls it prints the server's RSS
(/proc/PID/status VmRSS) and the growth per 1,000 calls over the interval. No call starts
after `--max-seconds` (the last interval is then shorter).

    python bench/rss_bench.py                       # 50,000 distinct semantic queries
    python bench/rss_bench.py --queries 10000 --every 2000
    python bench/rss_bench.py --mode keyword        # keyword queries instead
    python bench/rss_bench.py --repeat 100          # 100 texts over and over (the floor)
    python bench/rss_bench.py --trace               # + tracemalloc's top growth in the server
    python bench/rss_bench.py --env MALLOC_ARENA_MAX=2 --trim

`--trace` traces the server's Python allocations from the first checkpoint (tracemalloc,
25 frames; SIGUSR1 starts it and takes a snapshot), and at the end the bench prints the 12
places whose allocations still alive grew most since (tracing slows the server ~2-3x).
`--trim` sends SIGUSR2 after the last checkpoint: the server calls glibc's
malloc_trim(0), and the RSS after it tells memory glibc keeps but no longer uses
(fragmentation) from memory that is really held. `--env K=V` sets variables for the
server (e.g. MALLOC_ARENA_MAX=2, one of glibc's tunables).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries

ROOT = Path(__file__).resolve().parent.parent
#: The first argument that makes this script the server it starts (see `serve_here`).
SERVE = "--serve-here"
#: Frames kept per traced allocation: deep enough to reach our code from numpy's.
TRACE_FRAMES = 25


def rss_kib(pid: int) -> int:
    """Resident set size of process `pid` in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def distinct_texts(count: int, seed: int) -> Iterator[str]:
    """`count` query texts, each different from every other: a generated query (from a pool
    of 2,000) and a serial number, so the model sees a new text of a usual length."""
    pool = generate_queries(2000, seed)
    rng = random.Random(seed)
    for n in range(count):
        yield f"{rng.choice(pool)} {n}"


def serve_here(snapshots: Path | None, argv: list[str]) -> None:
    """Run `cstp <argv>` in this process (the server the bench starts): SIGUSR2 calls
    glibc's malloc_trim(0); with `snapshots`, SIGUSR1 starts tracemalloc (TRACE_FRAMES) the
    first time, so start-up and indexing run untraced, and writes a snapshot to
    `snapshots`/N.tm, then touches N.done: the last snapshot holds what was allocated since
    the first and is still alive. Bench-only: nothing here is
    part of the service."""
    signal.signal(signal.SIGUSR2, lambda signum, frame: ctypes.CDLL("libc.so.6").malloc_trim(0))
    if snapshots is not None:
        taken = 0

        def snapshot(signum: int, frame: Any) -> None:
            nonlocal taken
            if not tracemalloc.is_tracing():  # from the first checkpoint: start-up untraced
                tracemalloc.start(TRACE_FRAMES)
            tracemalloc.take_snapshot().dump(str(snapshots / f"{taken}.tm"))
            (snapshots / f"{taken}.done").touch()
            taken += 1

        signal.signal(signal.SIGUSR1, snapshot)
    from a2a.cli.main import app

    sys.argv = ["cstp", *argv]
    app()


@contextmanager
def served(args: argparse.Namespace, port: int, snapshots: Path) -> Iterator[int]:
    """`cstp serve` on a fresh data folder with the examples indexed, until the block ends;
    its process id once /ready answers 200."""
    with tempfile.TemporaryDirectory() as data:
        env = {
            **os.environ,
            "CSTP_DATA_DIR": data,
            "PYTHONPATH": str(ROOT),
        }
        if args.model:
            env["CSTP_EMBEDDING_MODEL"] = args.model
        env.update(kv.split("=", 1) for kv in args.env)
        serve = ["serve", "--host", "127.0.0.1", "--port", str(port)]
        serve += ["--index", str(ROOT / "examples" / "decisions")]
        # Through this script, so SIGUSR2 (malloc_trim) is there with or without --trace.
        command = [sys.executable, __file__, SERVE, str(snapshots) if args.trace else "", *serve]
        # From the repository, as `make run`: config/cstp.yaml's settings (its access log at
        # info) hold but for the data folder and the port; the log goes to a file.
        log = (Path(data) / "serve.log").open("w")
        server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
        try:
            started = time.perf_counter()
            while True:
                if server.poll() is not None:
                    raise SystemExit(f"cstp serve exited with {server.returncode}")
                try:
                    ready = httpx.get(f"http://127.0.0.1:{port}/ready", timeout=5)
                    if ready.status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.3)
            print(f"ready after {time.perf_counter() - started:.1f} s", flush=True)
            yield server.pid
        finally:
            server.terminate()
            server.wait(timeout=30)


async def send(
    url: str,
    texts: list[str],
    clients: int,
    body: dict[str, Any],
    codes: dict[str, int],
    deadline: float = float("inf"),
) -> int:
    """Send one queryDecisions call per text from `clients` keep-alive connections, none
    started after `deadline` (time.perf_counter); the calls answered."""
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=120)
    sent = 0
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def client(worker: int) -> None:
            nonlocal sent
            for n in range(worker, len(texts), clients):
                if time.perf_counter() > deadline:
                    return
                payload = {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "cstp.queryDecisions",
                    "params": {**body, "query": texts[n]},
                }
                async with session.post(url, json=payload) as response:
                    reply = await response.json()
                code = str(reply["error"]["code"]) if "error" in reply else "ok"
                codes[code] = codes.get(code, 0) + 1
                sent += 1

        await asyncio.gather(*(client(i) for i in range(clients)))
    return sent


def snapshot_of(pid: int, snapshots: Path, n: int) -> tracemalloc.Snapshot:
    os.kill(pid, signal.SIGUSR1)
    done = snapshots / f"{n}.done"
    while not done.exists():
        time.sleep(0.1)
    return tracemalloc.Snapshot.load(str(snapshots / f"{n}.tm"))


def top_growth(first: tracemalloc.Snapshot, last: tracemalloc.Snapshot, calls: int) -> None:
    """The 12 traces (grouped by their innermost frame of ours, else their innermost) whose
    Python allocations grew most between the snapshots."""
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    stats = last.filter_traces(ignore).compare_to(first.filter_traces(ignore), "traceback")
    stats.sort(key=lambda s: s.size_diff, reverse=True)
    print(f"tracemalloc: top growth over {calls:,} calls (bytes, bytes/call, blocks)")
    for stat in stats[:12]:
        frames = stat.traceback
        ours = [f for f in frames if "/a2a/" in f.filename]
        where = ours[-1] if ours else frames[-1]
        inner = frames[-1]
        print(
            f"  {stat.size_diff:>+12,} {stat.size_diff / max(calls, 1):>8.1f} "
            f"{stat.count_diff:>+8,}  {inner.filename}:{inner.lineno}"
            + (f"  <- {where.filename}:{where.lineno}" if where is not inner else "")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50_000, help="calls after the warm-up")
    parser.add_argument("--every", type=int, default=10_000, help="calls between checkpoints")
    parser.add_argument("--warmup", type=int, default=2_000, help="calls before the first RSS")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--mode", choices=("semantic", "keyword", "hybrid"), default="semantic")
    parser.add_argument("--repeat", type=int, default=0, help="cycle N texts (0: all distinct)")
    parser.add_argument("--model", default=None, help="CSTP_EMBEDDING_MODEL (default: its own)")
    parser.add_argument("--env", action="append", default=[], metavar="K=V")
    parser.add_argument("--trace", action="store_true", help="tracemalloc top growth")
    parser.add_argument("--trim", action="store_true", help="malloc_trim(0) at the end")
    parser.add_argument("--max-seconds", type=float, default=1200)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    total = args.warmup + args.queries
    texts = list(distinct_texts(total, args.seed))
    if args.repeat:
        texts = [texts[n % args.repeat] for n in range(total)]
    body = {"retrievalMode": args.mode, "limit": 10}
    port = free_port()
    with tempfile.TemporaryDirectory() as snapshots, served(args, port, Path(snapshots)) as pid:
        url = f"http://127.0.0.1:{port}/cstp"
        codes: dict[str, int] = {}
        deadline = time.perf_counter() + args.max_seconds
        asyncio.run(send(url, texts[: args.warmup], args.clients, body, codes))
        first = snapshot_of(pid, Path(snapshots), 0) if args.trace else None
        base = last = rss_kib(pid)
        print(f"{'calls':>8} {'RSS MiB':>9} {'+MiB':>7} {'KiB/1k calls':>13} {'s':>6}")
        print(f"{0:>8,} {base / 1024:>9.1f}", flush=True)
        done, started = 0, time.perf_counter()
        while done < args.queries and time.perf_counter() < deadline:
            step = min(args.every, args.queries - done)
            begun = time.perf_counter()
            start = args.warmup + done
            chunk = texts[start : start + step]
            step = asyncio.run(send(url, chunk, args.clients, body, codes, deadline))
            done += step
            now = rss_kib(pid)
            print(
                f"{done:>8,} {now / 1024:>9.1f} {(now - base) / 1024:>+7.1f} "
                f"{(now - last) / max(step, 1) * 1000:>13.1f} {time.perf_counter() - begun:>6.1f}",
                flush=True,
            )
            last = now
        elapsed = time.perf_counter() - started
        print(
            f"{done:,} calls in {elapsed:.0f} s: +{(last - base) / 1024:.1f} MiB, "
            f"{(last - base) / max(done, 1) * 1024:.0f} B/call; codes {codes}"
        )
        if first is not None:
            top_growth(first, snapshot_of(pid, Path(snapshots), 1), done)
        if args.trim:
            os.kill(pid, signal.SIGUSR2)
            time.sleep(1)
            print(f"after malloc_trim(0): {rss_kib(pid) / 1024:.1f} MiB")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == SERVE:
        serve_here(Path(sys.argv[2]) if sys.argv[2] else None, sys.argv[3:])
    else:
        main()

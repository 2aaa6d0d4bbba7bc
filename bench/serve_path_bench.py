"""The path a user takes, timed as they meet it: `cstp index` of N decisions, then `cstp serve`.

Issue 44, item 10: the bench built the graph and the snapshot directly, while a user who
ran `cstp index` then `cstp serve` waited for a full read of Chroma and a graph build. This
bench runs the real commands as subprocesses (the fast static model, WordLlama, an
embedded store) and reports, in one run:

- `cstp index`: wall time and what it logged about the search index (load, graph,
  snapshot);
- first answer: seconds from spawning `cstp serve` to the first queryDecisions answer;
- the first minute: semantic queries without a filter, each sent approximate (the
  planner's choice) and with `exact: true`, interleaved (each side first on every other
  query), over HTTP on 127.0.0.1, until 60 s after the spawn: p50 of each and their ratio;
- RSS (and peak RSS) of the serve process at the end of that minute;
- restart: the process stopped with SIGTERM and started again, seconds to its first answer;
- load from Chroma (the anchor of the restart): `cstp serve` with an empty snapshot
  folder (CSTP_INDEX_SNAPSHOT_DIR), seconds to its first answer.

    python bench/serve_path_bench.py --size 300000 --data /tmp/cstp-path

`--data DIR` keeps the decision files (DIR/files, JSON, 10,000 a file) and the store
(DIR/store); a re-run with the same size skips the files, and `--skip-index` the index run
too. Targets (issue 44): first answer <= 15 s, semantic p50 <= 0.3x exact in the first
minute, restart <= max(10 s, 0.25x the load from Chroma), RSS <= 1,200 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_queries, generate_records, percentile

FAST = "wordllama-l2-supercat-256"
PER_FILE = 10_000
#: The measured window: queries run until this many seconds after the spawn.
FIRST_MINUTE = 60.0


def write_files(folder: Path, size: int) -> None:
    """`size` generated decisions as JSON files of PER_FILE records, unless already there."""
    marker = folder / "SIZE"
    if marker.exists() and marker.read_text() == str(size):
        return
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    records = generate_records(size, seed=7)
    for n, start in enumerate(range(0, size, PER_FILE)):
        part = [
            r.model_dump(mode="json", exclude_none=True) for r in records[start : start + PER_FILE]
        ]
        (folder / f"decisions-{n:04d}.json").write_text(json.dumps(part))
    marker.write_text(str(size))


def environment(data: Path, port: int, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "CSTP_DATA_DIR": str(data),
        "CSTP_EMBEDDING_MODEL": FAST,
        "CSTP_HOST": "127.0.0.1",
        "CSTP_PORT": str(port),
        "CSTP_LOG_LEVEL": "info",
        "ANONYMIZED_TELEMETRY": "False",
        **extra,
    }
    if "CSTP_INDEX_SNAPSHOT_DIR" not in extra:
        env.pop("CSTP_INDEX_SNAPSHOT_DIR", None)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def index_run(files: Path, data: Path, log: Path) -> float:
    """`cstp index files` into `data`; its wall seconds."""
    started = time.perf_counter()
    with log.open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "a2a", "index", str(files), "--no-progress"],
            env=environment(data, 0),
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"cstp index exited {done.returncode}: {log.read_text()[-2000:]}")
    return time.perf_counter() - started


def query(text: str, exact: bool) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "cstp.queryDecisions",
        "params": {"query": text, "limit": 10, "exact": exact},
    }


class Serve:
    """One `cstp serve` process, its spawn time and log."""

    def __init__(self, data: Path, log: Path, **extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/cstp"
        self.log = log
        self.out = log.open("wb")
        self.spawned = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "a2a", "serve"],
            env=environment(data, self.port, **extra),
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )

    def first_answer(self, http: httpx.Client, text: str) -> float:
        """Seconds from the spawn to the first queryDecisions answer."""
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"cstp serve exited: {self.log.read_text()[-2000:]}")
            try:
                reply = http.post(self.url, json=query(text, False), timeout=300)
            except httpx.HTTPError:
                time.sleep(0.05)
                continue
            body = reply.json()
            if "result" in body:
                return time.perf_counter() - self.spawned
            time.sleep(0.05)

    def rss_mib(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) of the process, MiB."""
        found = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
        return found["VmRSS"], found["VmHWM"]

    def stop(self) -> float:
        """SIGTERM, then wait; seconds until it exited."""
        started = time.perf_counter()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.out.close()
        return time.perf_counter() - started


def first_minute(serve: Serve, http: httpx.Client, texts: list[str]) -> dict[str, float]:
    """Approximate and exact semantic queries without a filter, interleaved, until
    FIRST_MINUTE after the spawn: p50 of each (ms) and how many of each ran."""
    approx: list[float] = []
    exact: list[float] = []
    turn = 0
    while time.perf_counter() - serve.spawned < FIRST_MINUTE:
        text = texts[turn % len(texts)]
        order = (False, True) if turn % 2 else (True, False)
        for is_exact in order:
            started = time.perf_counter()
            reply = http.post(serve.url, json=query(text, is_exact), timeout=60)
            elapsed = (time.perf_counter() - started) * 1000
            assert "result" in reply.json(), reply.text
            (exact if is_exact else approx).append(elapsed)
        turn += 1
    return {
        "approx_p50": percentile(approx, 50),
        "exact_p50": percentile(exact, 50),
        "pairs": float(len(approx)),
    }


def lines_of(log: Path, *needles: str) -> list[str]:
    return [
        line.strip()
        for line in log.read_text(errors="replace").splitlines()
        if any(n in line for n in needles)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=300_000)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--skip-index", action="store_true")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory()
    root = args.data or Path(scratch.name)
    files, data, logs = root / "files", root / "store", root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    texts = generate_queries(args.queries, seed=7)
    print(f"size {args.size:,}; data in {root}", flush=True)
    if not args.skip_index:
        write_files(files, args.size)
        seconds = index_run(files, data, logs / "index.log")
        print(f"cstp index: {seconds:.0f} s", flush=True)
        for line in lines_of(logs / "index.log", "search index", "indexed into"):
            print(f"  {line}", flush=True)
    with httpx.Client() as http:
        serve = Serve(data, logs / "serve-1.log")
        first = serve.first_answer(http, texts[0])
        print(
            f"cstp serve after cstp index: first answer {first:.1f} s after the spawn", flush=True
        )
        minute = first_minute(serve, http, texts)
        rss, peak = serve.rss_mib()
        print(
            f"  first minute: semantic p50 {minute['approx_p50']:.2f} ms, exact: true"
            f" {minute['exact_p50']:.2f} ms ({minute['approx_p50'] / minute['exact_p50']:.2f}x;"
            f" {minute['pairs']:.0f} pairs); RSS {rss:,.0f} MiB (peak {peak:,.0f})",
            flush=True,
        )
        stopped = serve.stop()
        for line in lines_of(serve.log, "search index"):
            print(f"  {line}", flush=True)
        print(f"  stopped in {stopped:.1f} s", flush=True)

        again = Serve(data, logs / "serve-2.log")
        restart = again.first_answer(http, texts[1])
        rss, peak = again.rss_mib()
        print(f"restart: first answer {restart:.1f} s; RSS {rss:,.0f} MiB", flush=True)
        again.stop()
        for line in lines_of(again.log, "search index"):
            print(f"  {line}", flush=True)

        with tempfile.TemporaryDirectory(dir=root) as empty:
            cold = Serve(data, logs / "serve-chroma.log", CSTP_INDEX_SNAPSHOT_DIR=empty)
            chroma = cold.first_answer(http, texts[2])
            rss, peak = cold.rss_mib()
            print(
                f"load from Chroma (empty snapshot folder): first answer {chroma:.1f} s;"
                f" RSS {rss:,.0f} MiB",
                flush=True,
            )
            cold.stop()
            for line in lines_of(cold.log, "search index"):
                print(f"  {line}", flush=True)
    target = max(10.0, 0.25 * chroma)
    ratio = minute["approx_p50"] / minute["exact_p50"]
    print(
        f"targets: first answer {first:.1f} s (<= 15); p50 ratio {ratio:.2f}x (<= 0.3);"
        f" restart {restart:.1f} s (<= {target:.1f}); RSS after the first minute: see above"
        " (<= 1,200 MiB)",
        flush=True,
    )
    scratch.cleanup()


if __name__ == "__main__":
    main()

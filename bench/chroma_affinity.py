"""Embedded Chroma's writes with its threads free or on one CPU core (a2a.store.affinity).

Each round writes `--records` synthetic decisions (random unit vectors, no model) into a
fresh embedded collection, in upserts of 5,000 as `cstp index` does, once with the store's
`single_core` on and once off, each in a process of its own, alternating which goes first.
Prints records/s and the process's user and kernel CPU seconds.

    python bench/chroma_affinity.py [--records 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_bench import generate_records

from a2a.store.chroma import ChromaDecisionStore

BATCH = 5000


def one(records: int, single_core: bool) -> str:
    """Write `records` into a fresh collection; a result line."""
    decisions = generate_records(records, seed=3)
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((records, 256)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as folder:
        store = ChromaDecisionStore(
            data_dir=Path(folder), collection="bench", embedding_model="m", single_core=single_core
        )
        store.count()  # opens the client (and pins) before the clock starts
        started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        for start in range(0, records, BATCH):
            store.upsert(decisions[start : start + BATCH], vectors[start : start + BATCH])
        seconds, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
        store.close()
    return (
        f"{'one core' if single_core else 'free':>8} | {records / seconds:>9,.0f} | "
        f"{after.ru_utime - before.ru_utime:>8.1f} | {after.ru_stime - before.ru_stime:>8.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    if args.one:
        print(one(args.records, args.one == "on"), flush=True)
        return
    print(f"{args.records:,} records in upserts of {BATCH:,}, {os.cpu_count()} cores")
    print(f"{'threads':>8} | {'records/s':>9} | {'user s':>8} | {'kernel s':>8}")
    for round_ in range(args.rounds):
        order = ["on", "off"] if round_ % 2 else ["off", "on"]
        for single in order:
            command = [sys.executable, __file__, "--records", str(args.records), "--one", single]
            subprocess.run(command, check=True)


if __name__ == "__main__":
    main()

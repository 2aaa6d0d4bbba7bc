"""`cstp export` and `cstp import` of a large store: records/s and the RSS each adds.

Runs the real commands as subprocesses, embedded and against a `chroma run` server:

1. embedded export of a copy of a built store (default /work/bench-data/100000, made by
   `bench/scale_bench.py --sizes 100000 --synthetic-vectors --data /work/bench-data
   --no-queries`: collection `bench`, model wordllama-l2-supercat-256; never written here);
2. embedded import of that file into a new folder (collection `moved`, --model), then
   the same import again (every record unchanged: nothing embedded or written);
3. import of the same file into a fresh `chroma run` server, then export from it.

Each command's RSS is sampled every 20 ms over its whole process tree (the import's model
runs in a child process from 10,000 records), and the anchor is the same command on an
empty store or an empty file, measured in the same run: `added` = peak - anchor's peak,
which the issue bounds at 300 MiB. Rates count wall time from start to exit (start-up
included: ~1-2 s of the total). The second export must equal the first byte for byte.

    python bench/moving_bench.py [--store DIR] [--collection bench] [--model NAME]
        [--limit N]   # export/import only the first N lines (a quicker run)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers import chroma_server  # noqa: E402

FAST = "wordllama-l2-supercat-256"


@dataclass
class Run:
    """One command: wall seconds, peak RSS of its process tree (MiB), exit code."""

    seconds: float
    peak_mib: float
    code: int
    stderr: str


def tree_rss_mib(pid: int) -> float:
    """Resident MiB of `pid` and every process below it (Linux /proc)."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
    return total


def run(args: list[str], env: dict[str, str], stdout: Path | None = None) -> Run:
    """`cstp ARGS` to completion, its tree's RSS sampled every 20 ms."""
    out = stdout.open("wb") if stdout else subprocess.DEVNULL
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(BIN / "cstp"), *args],
        env={**os.environ, **env},
        stdout=out,
        stderr=subprocess.PIPE,
    )
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_mib(process.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    if stdout:
        out.close()  # type: ignore[union-attr]
    return Run(seconds, peak, process.returncode, err.decode(errors="replace"))


def checked(result: Run, what: str) -> Run:
    if result.code not in (0,):
        raise SystemExit(f"{what} exited {result.code}:\n{result.stderr[-3000:]}")
    return result


#: Chroma opening a collection, alone: RSS before and after `count()`, in a fresh process.
OPEN_ONLY = """
import sys
from pathlib import Path
import chromadb
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
client = chromadb.PersistentClient(path=sys.argv[1])
before = rss()
client.get_collection(sys.argv[2]).count()
print(rss() - before)
"""


def chroma_open_mib(folder: Path, collection: str) -> float:
    """MiB embedded Chroma takes to open `collection` in `folder` (its count alone)."""
    done = subprocess.run(
        [sys.executable, "-c", OPEN_ONLY, str(folder), collection],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip())


def report(what: str, result: Run, anchor: Run, records: int) -> None:
    print(
        f"{what:<28} {records:>7,} records {result.seconds:7.1f} s "
        f"{records / result.seconds:7,.0f} records/s  peak {result.peak_mib:6.0f} MiB, "
        f"anchor {anchor.peak_mib:4.0f} MiB, added {result.peak_mib - anchor.peak_mib:5.0f} MiB",
        flush=True,
    )


@contextmanager
def workspace() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="cstp-moving-") as folder:
        yield Path(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/work/bench-data/100000"))
    parser.add_argument("--collection", default="bench")
    parser.add_argument("--source-model", default=FAST, help="the store's model")
    parser.add_argument("--model", default=FAST, help="the model the import embeds with")
    parser.add_argument("--limit", type=int, default=None)
    options = parser.parse_args()
    with workspace() as root:
        print(f"copying {options.store} ...", flush=True)
        shutil.copytree(options.store, root / "source" / "chroma")
        source = {
            "CSTP_DATA_DIR": str(root / "source"),
            "CSTP_COLLECTION": options.collection,
            "CSTP_EMBEDDING_MODEL": options.source_model,
        }
        empty = {**source, "CSTP_DATA_DIR": str(root / "empty")}
        dump = root / "export.jsonl"
        anchor = checked(run(["export", "--no-progress"], empty, root / "empty.jsonl"), "anchor")
        result = checked(run(["export", "--no-progress"], source, dump), "export")
        if options.limit is not None:
            lines = dump.read_bytes().splitlines(keepends=True)[: options.limit]
            dump.write_bytes(b"".join(lines))
        records = sum(1 for _ in dump.open("rb"))
        report("export, embedded", result, anchor, records)
        opening = chroma_open_mib(root / "source" / "chroma", options.collection)
        print(f"   of which Chroma opening the collection (count() alone): {opening:.0f} MiB")

        moved = {
            # A busy shared machine made one Chroma server write of 5,000 records pass the
            # default 10 s (the import's writes are 1,000 records now); not what is measured.
            "CSTP_CHROMA_TIMEOUT_SECONDS": "60",
            "CSTP_DATA_DIR": str(root / "moved"),
            "CSTP_COLLECTION": "moved",
            "CSTP_EMBEDDING_MODEL": options.model,
        }
        (root / "nothing.jsonl").write_bytes(b"")
        nothing = {**moved, "CSTP_DATA_DIR": str(root / "nothing")}
        anchor = checked(run(["import", str(root / "nothing.jsonl"), "--no-progress"], nothing), "")
        result = checked(run(["import", str(dump), "--no-progress"], moved), "import")
        report(f"import, embedded ({options.model})", result, anchor, records)
        print("  ", result.stderr.strip().splitlines()[-1], flush=True)
        opening = chroma_open_mib(root / "moved" / "chroma", "moved")
        print(f"   Chroma opening the imported collection (count() alone): {opening:.0f} MiB")
        result = checked(run(["import", str(dump), "--no-progress"], moved), "import again")
        report("import again (unchanged)", result, anchor, records)
        print("  ", result.stderr.strip().splitlines()[-1], flush=True)

        with chroma_server(root / "server") as (url, _):
            served = {**moved, "CSTP_CHROMA_URL": url}
            empty_served = {**served, "CSTP_COLLECTION": "empty"}
            anchor = checked(
                run(["import", str(root / "nothing.jsonl"), "--no-progress"], empty_served), ""
            )
            result = checked(run(["import", str(dump), "--no-progress"], served), "import")
            report("import, chroma run", result, anchor, records)
            anchor = checked(
                run(["export", "--no-progress"], empty_served, root / "empty2.jsonl"), ""
            )
            again = root / "again.jsonl"
            result = checked(run(["export", "--no-progress"], served, again), "export")
            report("export, chroma run", result, anchor, records)
        same = again.read_bytes() == dump.read_bytes()
        print(f"export -> import -> export byte-identical: {same}", flush=True)
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()

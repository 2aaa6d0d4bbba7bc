"""What embedded Chroma keeps in memory per collection it has read (docs/scaling.md, Tenants).

Opens an embedded Chroma folder (read only: nothing is written) and touches its tenant
collections one by one, twice over: `count()`, a `where` read of metadata (a snapshot's
catch-up), then every record with its embedding (a load). After each collection it prints
the process's anonymous RSS, after glibc's `malloc_trim(0)` (so freed memory kept by the
allocator is not counted). `--hnsw-cache N` gives Chroma's Rust bindings an HNSW cache of N
collections: its size is the open-file limit / 5 when the client opens (chromadb/api/rust.py,
the only cache setting the embedded client has), so the limit is lowered while it opens.

    python bench/chroma_memory.py var/tenant_bench/10x10000/chroma --hnsw-cache 3
"""

from __future__ import annotations

import argparse
import ctypes
import re
import resource
from pathlib import Path

import chromadb
from chromadb.config import Settings


def anon_mib() -> int:
    """The process's anonymous resident memory (RssAnon) in MiB, after malloc_trim."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    found = re.search(r"RssAnon:\s+(\d+)", Path("/proc/self/status").read_text())
    assert found is not None
    return int(found.group(1)) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="an embedded Chroma folder")
    parser.add_argument("--hnsw-cache", type=int, help="HNSW indexes Chroma may keep")
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    if args.hnsw_cache is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (5 * args.hnsw_cache, limits[1]))
    settings = Settings(anonymized_telemetry=False)
    client = chromadb.PersistentClient(path=str(args.folder), settings=settings)
    resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    cache = getattr(client._server, "hnsw_cache_size", "?")
    names = sorted(c.name for c in client.list_collections() if c.name.startswith("t.t"))
    print(f"HNSW cache {cache} collections; {len(names)} tenant collections; {anon_mib()} MiB")
    for n in range(args.passes):
        for name in names:
            collection = client.get_collection(name, embedding_function=None)
            total = collection.count()
            counted = anon_mib()
            collection.get(where={"updated_at": {"$gte": 2**62}}, include=["metadatas"])
            for offset in range(0, total, 1000):
                collection.get(include=["embeddings", "metadatas"], limit=1000, offset=offset)
            print(f"pass {n + 1} {name}: after count {counted} MiB, after reading all {anon_mib()}")


if __name__ == "__main__":
    main()

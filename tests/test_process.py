"""configure_process: what `cstp serve` and `cstp index` set process-wide, and only they."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, os
import faiss
from threadpoolctl import threadpool_info
before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
graph_before = faiss.omp_get_max_threads()
from a2a.app.process import configure_process
configure_process()
print(json.dumps({
    "blas_before": before,
    "blas": [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"],
    "graph_before": graph_before,
    "graph": faiss.omp_get_max_threads(),
    "env": {n: os.environ.get(n) for n in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
}))
"""


def _probe(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found: dict[str, object] = json.loads(run.stdout)
    return found


def test_blas_and_faiss_on_one_thread_and_the_children_told_so() -> None:
    found = _probe()
    assert found["blas"] and set(found["blas"]) == {1}  # type: ignore[arg-type]
    assert found["graph"] == 1
    assert found["env"] == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def test_a_thread_count_the_operator_set_is_kept_for_the_children() -> None:
    found = _probe(OMP_NUM_THREADS="2")
    assert found["env"] == {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "1"}
    assert found["graph"] == 1  # this process: one walk is sequential

"""Process-wide settings of the `cstp serve` and `cstp index` processes, made once at start.

Library code (a2a.index and the rest) never changes process-global state; the entry points
call `configure_process()` before they build anything (a2a.cli).
"""

from __future__ import annotations

import os

#: Thread counts read by OpenBLAS, MKL and OpenMP (faiss) when a process loads them: set
#: here so that the worker processes `cstp serve --workers N` starts inherit them.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def configure_process() -> None:
    """BLAS and faiss (OpenMP) on one thread each in this process and its children.

    A matrix-vector product over 100k rows is faster single-threaded on a loaded machine
    (bench/scale_bench.py), concurrent queries then use one core each instead of fighting
    for all, and a lone graph walk is sequential (with 2 OpenMP threads on 2 shared cores
    it ran 4x slower). A variable already set is left as the operator set it (for the
    children); this process's own libraries, loaded already, are limited through
    threadpoolctl and faiss. Idempotent.
    """
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    from threadpoolctl import threadpool_limits

    from a2a.index.graph import limit_graph_threads

    threadpool_limits(limits=1, user_api="blas")
    limit_graph_threads()

"""An embedding model in a child process, so that its CPU overlaps what holds our GIL."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import numpy.typing as npt

from a2a.concurrency import start_thread
from a2a.embeddings.background import BackgroundModel
from a2a.embeddings.base import Embedder
from a2a.errors import EmbeddingModelError

#: The model of this process when it is a child (loaded by its first `_embed` call).
_model: Embedder | None = None


class ModelProcess(BackgroundModel):
    """The model called `name` (a key of a2a.embeddings.MODELS), run in one spawned child.

    Embedded Chroma holds the GIL for the whole of a write, so a model in a thread of the
    same process waits for it; in a child it embeds the next batch meanwhile. The child
    loads the model on its first call and ignores SIGINT and SIGTERM: stopping is the
    parent's decision (it stores what is embedded, then `abandon`s the child), and a Ctrl-C
    sent to the whole process group must not kill the model before that. It exits by
    itself when the parent dies (kill -9 of `cstp index`: nothing else would end it). Use
    as a context manager; leaving it waits for the call in flight, then the child exits.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_ignore_stop_signals,
            initargs=(os.getpid(),),
        )
        self._abandoned = False

    def submit(self, texts: Sequence[str]) -> Future[npt.NDArray[np.float32]]:
        """`embed(texts)` started now, while the caller goes on; its future.

        The future raises what `embed` raises.
        """
        embedded: Future[npt.NDArray[np.float32]] = Future()

        def settle(call: Future[npt.NDArray[np.float32]]) -> None:
            try:
                embedded.set_result(call.result())
            except BrokenProcessPool as error:
                embedded.set_exception(self._died(error))
            except BaseException as error:
                embedded.set_exception(error)

        try:
            self._pool.submit(_embed, self.name, list(texts)).add_done_callback(settle)
        except BrokenProcessPool as error:
            raise self._died(error) from error
        self._drop_result_writer()
        return embedded

    def _drop_result_writer(self) -> None:
        """Close this process's copy of the write end of the pool's result pipe; the child,
        started by the first `submit` (spawn), has its own, and is the only writer.

        With our copy open, a child killed half-way through sending a batch's vectors (it
        blocks on the pipe while Chroma's write holds our GIL) leaves the pool's reader
        waiting for the rest for ever: no EOF, and `cstp index` hangs instead of exiting 3.
        Closed, that read ends at EOF and the pool is broken. Idempotent.
        """
        writer = getattr(getattr(self._pool, "_result_queue", None), "_writer", None)
        if writer is not None:
            writer.close()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalised vector per text: float32, len(texts) x the model's dimension.

        Raises what loading or running the model raised in the child (EmbeddingModelError
        when it cannot load), and EmbeddingModelError when the child died (killed, out of
        memory): `cstp index` then exits 3, having stored the batches written before.
        """
        return self.submit(texts).result()

    def _died(self, error: BrokenProcessPool) -> EmbeddingModelError:
        died = EmbeddingModelError(
            f"the process running the embedding model {self.name!r} ended abruptly"
        )
        died.__cause__ = error
        return died

    def abandon(self) -> None:
        """Cancel the batches not started and end the child at once, without waiting for
        the batch in flight (SIGKILL: the child ignores SIGTERM, and holds nothing of ours)."""
        self._abandoned = True
        # ProcessPoolExecutor has no public way to end a busy worker (before Python 3.14),
        # and forgets its processes on shutdown: take them first.
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join(timeout=KILL_WAIT_SECONDS)  # SIGKILL: milliseconds

    def close(self) -> None:
        """Wait for the call in flight, if any, then end the child (at once when abandoned)."""
        self._pool.shutdown(wait=not self._abandoned, cancel_futures=True)


#: Seconds `abandon` waits for a killed child to be gone.
KILL_WAIT_SECONDS = 5.0
#: Seconds between the child's checks that its parent is still alive.
PARENT_CHECK_SECONDS = 0.5


def _ignore_stop_signals(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    start_thread(functools.partial(_exit_with, parent), "cstp-parent", daemon=True)


def _exit_with(parent: int) -> None:
    """End this child once `parent` is gone (it is re-parented then): the pool's queue
    gives it no EOF, since the child holds both of its ends."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)


def _embed(name: str, texts: list[str]) -> npt.NDArray[np.float32]:
    global _model
    if _model is None:
        from a2a.embeddings import load_embedder

        _model = load_embedder(name)
    return np.asarray(_model.embed_documents(texts), dtype=np.float32)

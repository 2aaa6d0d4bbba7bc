"""An embedding model working in the background: batches embedded while the caller goes on."""

from __future__ import annotations

import queue
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Self

import numpy as np
import numpy.typing as npt

from a2a.concurrency import start_thread
from a2a.embeddings.base import Embedder

_Job = tuple[list[str], "Future[npt.NDArray[np.float32]]"]


class BackgroundModel(ABC):
    """A model that embeds submitted batches one at a time, in order, while the caller goes
    on: on a thread here (ModelThread) or in a child process
    (a2a.embeddings.child.ModelProcess). Use as a context manager: leaving calls `close`.
    """

    @abstractmethod
    def submit(self, texts: Sequence[str]) -> Future[npt.NDArray[np.float32]]:
        """The vectors of `texts` (float32, one L2-normalised row per text), computed after
        the batches submitted before; the future raises what the model raised."""

    @abstractmethod
    def abandon(self) -> None:
        """Cancel the batches not started, and stop without waiting for the one in flight."""

    @abstractmethod
    def close(self) -> None:
        """Wait for the batches submitted (unless abandoned), then stop."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ModelThread(BackgroundModel):
    """`embedder` on one daemon thread: batches are embedded one at a time, in order.

    Leaving the context waits for the batches submitted. `abandon()` instead cancels the
    batches not started and returns at once; the batch in flight finishes on the daemon
    thread, which never holds up the process's exit.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._abandoned = False
        self._thread = start_thread(self._run, "cstp-index-embed", daemon=True)

    def submit(self, texts: Sequence[str]) -> Future[npt.NDArray[np.float32]]:
        embedded: Future[npt.NDArray[np.float32]] = Future()
        self._jobs.put((list(texts), embedded))
        return embedded

    def abandon(self) -> None:
        self._abandoned = True
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job[1].cancel()
        self._jobs.put(None)

    def close(self) -> None:
        if not self._abandoned:
            self._jobs.put(None)
            self._thread.join()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            texts, embedded = job
            if not embedded.set_running_or_notify_cancel():
                continue
            try:
                vectors = self._embedder.embed_documents(texts)
                embedded.set_result(np.asarray(vectors, dtype=np.float32))
            except BaseException as error:  # handed to the caller, who raises it
                embedded.set_exception(error)

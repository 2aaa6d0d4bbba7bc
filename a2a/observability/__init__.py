"""Operating the service: Prometheus metrics, request ids, structured per-call logs."""

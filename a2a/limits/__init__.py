"""Per-agent, per-method rate limits on JSON-RPC calls (CONTRACT.md section Rate limiting)."""

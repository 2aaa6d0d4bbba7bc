"""Bearer-token authentication: which agent is calling (CONTRACT.md section Transport)."""

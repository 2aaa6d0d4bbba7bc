"""Tenants: isolated sets of decisions, one Chroma collection each (CONTRACT.md, Tenants)."""

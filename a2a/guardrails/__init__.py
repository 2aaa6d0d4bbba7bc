"""Guardrails: the organisation's rules, in CEL, checked against a proposal, its precedents
and the caller's calibration before an agent acts (CONTRACT.md, Guardrails)."""

"""Decisions written, reviewed and read over the protocol, and their calibration."""

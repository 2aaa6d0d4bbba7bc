"""cstp: a decision memory for AI agents, answering cstp.queryDecisions over JSON-RPC 2.0."""

__version__ = "0.1.0"

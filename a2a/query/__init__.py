"""cstp.queryDecisions: params, filter translation, ranking and the query service."""

"""JSON-RPC 2.0: protocol, method table, dispatcher, and the error boundary."""

"""HTTP transport: the Starlette app and its routes."""

"""The composition root: what a running service is built from (tenants, their stacks)."""

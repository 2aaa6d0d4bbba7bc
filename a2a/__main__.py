"""`python -m a2a` runs the `cstp` command."""

from a2a.cli.main import main

main()

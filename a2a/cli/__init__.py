"""The `cstp` command line: main (serve, index, eval), the client commands, options, exit codes."""

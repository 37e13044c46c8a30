"""The command line: click commands of a few lines (main) and the Datasette child (serve)."""

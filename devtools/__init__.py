"""Developer tools, not shipped in the package: benchmarks, the simulated archive, the accuracy cases and the
blind audit. Run as `python -m devtools COMMAND` from the project folder."""

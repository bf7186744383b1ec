"""pooljudge: build and study passage-retrieval benchmarks."""

__version__ = "0.1.0"

"""Benchmarks of cdcore against peer libraries (``python -m cdcore.bench``)."""

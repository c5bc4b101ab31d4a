"""Benchmarks: retrieval quality on LoCoMo, speed against other stores. Run through `echo-duck bench`."""

"""Benchmarks of the models and the app (python -m benchmarks.bench), beside the package: not installed with it, not sent to a Space."""

"""Training a checkpoint and its loss, averaging the weights a run kept, and what it learned from."""

"""Training a checkpoint, averaging the weights a run kept, and what it learned from."""

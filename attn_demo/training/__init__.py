"""Training a checkpoint, and what it learned from."""

"""Checkpoint folders in Hugging Face Hub layout, and their model cards."""

"""The networks: the attention scores, the GRU encoder–decoders, the Transformer, their configurations and tokenizers."""

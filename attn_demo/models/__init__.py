"""The networks: the attention scores, the GRU encoder–decoders, the Transformer, their dropout, configurations and tokenizers."""

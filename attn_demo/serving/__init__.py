"""How the app serves a class: the catalogue of models, micro-batching, results computed once, ZeroGPU, who can reach it."""

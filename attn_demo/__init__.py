"""attn-demo: English→French encoder–decoder models whose attention you can watch.

Letters used in every shape comment of this package:

    B  batch size (sentences, or sentences × beams during beam search)
    S  source length in SentencePiece pieces (EOS included)
    T  target length in pieces (EOS included)
    E  embedding size
    D  size of an encoder annotation h_j = [→h_j; ←h_j]  (2 × encoder hidden size)
    H  decoder hidden size (size of s_t)
    A  hidden size of an additive / concat score
    R  rank of the reduced-rank score (the k of e_tj = s_tᵀ UᵀV h_j)
    V  vocabulary size
    K  beam size

Symbols shared with the app:  h_j encoder annotation, s_t decoder state, e_tj score,
α_tj = softmax_j(e_tj) attention weight, c_t = Σ_j α_tj h_j context vector, y_t emitted piece,
C_tj = Σ_{t'<t} α_t'j coverage (the attention h_j has received so far).
"""
from attn_demo.decoding.search import Penalties
from attn_demo.translator import CheckpointUnavailable, Translation, Translator, load_translator

__all__ = ["CheckpointUnavailable", "Penalties", "Translation", "Translator", "load_translator"]

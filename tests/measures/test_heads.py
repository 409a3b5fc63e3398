from types import SimpleNamespace

import numpy as np
import pytest

from attn_demo.measures.heads import alpha_moved, corpus_statistics, every_head, head_statistics, same_reading
from conftest import tiny_config


def test_a_head_that_always_looks_at_one_piece_is_sure_and_one_on_eos_rests_there():
    cross = np.full((1, 2, 3, 4), 0.25)  # (L, H, T, S): head 1 spreads its α evenly
    cross[0, 1] = [[0, 0, 0, 1], [0, 0, 0, 1], [1, 0, 0, 0]]  # head 2: twice on </s> (the last piece), once on x_1
    confidence, on_eos, steps = head_statistics(SimpleNamespace(cross=cross))
    np.testing.assert_allclose(confidence, [[0.75, 3.0]])
    np.testing.assert_allclose(on_eos, [[0.75, 2.0]])
    assert steps == 3


def test_corpus_statistics_weigh_every_output_step_alike():
    short, long = np.zeros((1, 1, 1, 2)), np.zeros((1, 1, 3, 2))
    short[..., 1], long[..., 0] = 1.0, 1.0  # one step on </s>, three on the first piece
    stats = corpus_statistics([SimpleNamespace(heads=SimpleNamespace(cross=c)) for c in (short, long)])
    assert stats == {"layer 1, head 1": {"confidence": 1.0, "eos_share": 0.25}}


def test_every_head_is_each_layer_s_heads_in_order():
    assert every_head(tiny_config("transformer")) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    with pytest.raises(AttributeError):
        every_head(tiny_config("bahdanau"))  # a GRU model has no heads


def test_two_translations_read_the_same_french_up_to_the_step_where_they_part():
    assert same_reading(["▁a", "▁b", "▁c", "</s>"], ["▁a", "▁b", "▁d", "</s>"]) == 3  # step 3 still reads ▁a ▁b
    assert same_reading(["▁a", "</s>"], ["▁a", "</s>"]) == 2  # the same French: every step
    assert same_reading(["▁a", "</s>"], ["▁a", "▁b", "</s>"]) == 2  # one ends where the other goes on
    assert same_reading(["▁x", "</s>"], ["▁a", "</s>"]) == 1  # the first step reads no French yet


def test_alpha_moved_is_each_layer_s_largest_change_over_the_steps_given():
    cross = np.zeros((2, 2, 3, 4))  # (L, H, T, S)
    other = cross.copy()
    other[0, 1, 0, 3], other[1, 0, 2, 1], other[1, 1, 1, 0] = 0.2, 0.5, -0.1
    moved = [alpha_moved(SimpleNamespace(cross=cross), SimpleNamespace(cross=other), steps) for steps in (2, 3)]
    np.testing.assert_allclose(moved, [[0.2, 0.1], [0.2, 0.5]])  # layer 2's largest change is at step 3

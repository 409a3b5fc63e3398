from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attn_demo import load_translator
from attn_demo.decoding.grids import grid_name, head_grids, word_attention, words_view
from attn_demo.measures import alignment
from attn_demo.measures.alignment import (
    ALIGNERS, GoldAlignments, OtherLinks, alignment_error, argmax_links, attention_links, attribution_alignments,
    intersect_links, model_input, read_gold, threshold_links, word_spans)


def test_read_gold_is_zero_based_with_sure_inside_possible(tmp_path):
    (tmp_path / "test.e").write_text("the cat .\nyes\n", encoding="utf-8")
    (tmp_path / "test.f").write_text("le chat .\noui\n", encoding="utf-8")
    (tmp_path / "test.wa.nonullalign").write_text("0001 1 1 S\n0001 2 2 P\n0001 3 3 S\n0002 1 1 P\n")
    gold = read_gold(tmp_path)
    assert gold.english == [["the", "cat", "."], ["yes"]] and gold.french[1] == ["oui"]
    assert gold.sure == [{(0, 0), (2, 2)}, set()]
    assert gold.possible == [{(0, 0), (1, 1), (2, 2)}, {(0, 0)}]


def test_aer_precision_recall():
    sure, possible = [{(0, 0)}, {(1, 1)}], [{(0, 0), (1, 2)}, {(1, 1), (0, 1)}]
    assert alignment_error(sure, sure, possible) == {"aer": 0.0, "precision": 1.0, "recall": 1.0}
    # A∩S = 1, A∩P = 2, |A| = 3, |S| = 2: AER = 1 − 3/5; a possible link is no error, a missed sure one is
    result = alignment_error([{(0, 0), (1, 2), (2, 2)}, set()], sure, possible)
    assert result["aer"] == pytest.approx(0.4) and result["precision"] == pytest.approx(2 / 3) and result["recall"] == 0.5


def test_word_spans_follow_the_word_start_marks():
    pieces = ["▁le", "▁Or", "ateur", "▁", ","]
    assert word_spans(pieces, ["le", "Orateur", ","]) == [range(0, 1), range(1, 3), range(3, 5)]
    with pytest.raises(ValueError, match="do not spell"):
        word_spans(pieces, ["le", "orateur", ","])
    with pytest.raises(ValueError, match="do not spell"):
        word_spans(["▁le", "▁Or"], ["le", "Orateur", ","])


def test_word_attention_sums_english_pieces_and_averages_french_pieces():
    # 3 French pieces (2 words) + EOS step; 3 English pieces (2 words) + EOS
    attention = np.array([[0.5, 0.2, 0.2, 0.1],
                          [0.1, 0.6, 0.2, 0.1],
                          [0.0, 0.2, 0.8, 0.0],
                          [0.7, 0.1, 0.1, 0.1]], dtype=np.float32)
    source, target = [range(0, 1), range(1, 3)], [range(0, 1), range(1, 3)]
    alpha = word_attention(attention, source, target)
    np.testing.assert_allclose(alpha, [[0.5, 0.4], [0.05, 0.9]], atol=1e-6)
    np.testing.assert_allclose(alpha.sum(1), [1 - 0.1, 1 - (0.1 + 0.0) / 2], atol=1e-6)  # 1 − α(EOS)
    shifted = word_attention(attention, source, target, shift=1)  # rows 1 and (2, 3)
    np.testing.assert_allclose(shifted, [[0.1, 0.8], [0.35, 0.6]], atol=1e-6)


def test_rules_on_a_hand_made_matrix():
    alpha = np.array([[0.6, 0.3, 0.1],   # French word 0
                      [0.5, 0.2, 0.3],   # French word 1: its best English word 0 prefers French word 0
                      [0.0, 0.35, 0.65]])
    assert argmax_links(alpha) == {(0, 0), (0, 1), (2, 2)}
    assert intersect_links(alpha) == {(0, 0), (2, 2)}
    assert threshold_links(alpha, 0.3) == {(0, 0), (1, 0), (0, 1), (2, 1), (1, 2), (2, 2)}
    assert threshold_links(alpha, 0.6) == {(0, 0), (2, 2)}


def test_shifted_rules_read_the_next_step():
    """A diagonal one step late: the plain argmax misses every link, the shifted one finds them all."""
    attention = np.eye(4, dtype=np.float32)[[3, 0, 1, 2]]  # step t attends to word t − 1
    attention[0] = [0.0, 0.0, 0.4, 0.6]
    spans = [range(i, i + 1) for i in range(3)]
    links = attention_links(attention, spans, spans)
    assert set(links) == set(ALIGNERS)
    assert links["argmax+1"] == links["intersect+1"] == {(0, 0), (1, 1), (2, 2)}
    assert links["argmax"] == {(2, 0), (0, 1), (1, 2)} and links["threshold-0.5"] == {(0, 1), (1, 2)}


def test_model_input_raises_only_the_first_letter():
    assert model_input(["monsieur", "le", "Orateur", ","]) == ["Monsieur", "le", "Orateur", ","]
    assert model_input(["2", "."]) == ["2", "."]


def test_words_view_sums_an_english_words_pieces_and_averages_a_french_words_rows():
    source = ["▁The", "▁euro", "pé", "enne", ".", "</s>"]  # words: The | européenne. | </s>
    target = ["▁L", "'", "euro", "</s>"]  # words: L'euro | </s>
    rng = np.random.default_rng(0)
    attention = rng.dirichlet(np.ones(len(source)), size=len(target)).astype(np.float32)  # (T, S)
    source_words, target_words, alpha = words_view(source, target, attention)
    assert source_words == ["The", "européenne.", "</s>"] and target_words == ["L'euro", "</s>"]
    # "européenne." gets the attention mass of its four pieces; "L'euro" the mean of its three rows
    np.testing.assert_allclose(alpha[:, 1], [attention[:3, 1:5].sum(1).mean(), attention[3, 1:5].sum()], rtol=1e-6)
    np.testing.assert_allclose(alpha.sum(1), 1.0, rtol=1e-6)  # every row is still a distribution


def test_a_transformer_offers_each_head_and_each_layer_s_mean_as_a_grid():
    cross = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 5))  # (L, H, T, S), rows summing to 1
    grids = head_grids(SimpleNamespace(cross=cross))
    assert len(grids) == 2 * (3 + 1) and grid_name(1, None) == "layer 2, mean of heads" and grid_name(0, 2) == "layer 1, head 3"
    np.testing.assert_array_equal(grids[(1, 2)], cross[1, 2])
    np.testing.assert_allclose(grids[(0, None)], cross[0].mean(0))


@pytest.fixture
def toy_gold(monkeypatch) -> GoldAlignments:
    """Three gold sentences of the toy pairs' words, read as they are (the toy tokenizers know no capital letters)."""
    monkeypatch.setattr(alignment, "model_input", lambda words: words)
    pairs = [("the red cat", "le chat rouge"), ("I see the blue dog .", "je vois le chien bleu ."), ("the green pen", "le stylo vert")]
    return GoldAlignments([en.split() for en, _ in pairs], [fr.split() for _, fr in pairs], [set()] * 3, [set()] * 3)


def test_attribution_links_kept_as_they_are_made_let_a_stopped_run_go_on_where_it_stopped(toy_checkpoint, toy_gold, tmp_path):
    translator, gold, kept = load_translator(toy_checkpoint), toy_gold, tmp_path / "links.jsonl"
    whole = attribution_alignments(translator, gold, "input-x-gradient", [0, 1, 2])
    attribute, asked = translator.attribute, []

    def stopped_after_two(*args):
        asked.append(args[0])
        if len(asked) > 2:
            raise KeyboardInterrupt  # the run stopped on the third sentence
        return attribute(*args)

    translator.attribute = stopped_after_two
    with pytest.raises(KeyboardInterrupt):
        attribution_alignments(translator, gold, "input-x-gradient", [0, 1, 2], kept)
    asked.clear()
    assert attribution_alignments(translator, gold, "input-x-gradient", [0, 1, 2], kept) == whole
    assert asked == ["the green pen"]  # only the sentence it had not finished
    kept.write_text(kept.read_text()[:-10])  # the last line cut short, as by a run killed while writing it
    asked.clear()
    assert attribution_alignments(translator, gold, "input-x-gradient", [0, 1, 2], kept) == whole and len(asked) == 1
    assert len(kept.read_text().splitlines()) == 3  # written again on a line of its own
    asked.clear()
    assert attribution_alignments(translator, gold, "input-x-gradient", [0, 1, 2], kept) == whole and asked == []
    kept.write_text(kept.read_text()[:-1])  # whole but for its newline: made again too, as it may be cut anywhere
    assert attribution_alignments(translator, gold, "input-x-gradient", [0, 1, 2], kept) == whole and len(asked) == 1
    assert kept.read_text().count("\n") == 3


def test_kept_links_of_other_weights_or_other_sentences_are_refused(toy_checkpoint, toy_gold, tmp_path):
    translator, gold, kept = load_translator(toy_checkpoint), toy_gold, tmp_path / "links.jsonl"
    attribution_alignments(translator, gold, "input-x-gradient", [0], kept)
    with torch.no_grad():
        next(translator.model.parameters()).add_(1e-3)
    with pytest.raises(OtherLinks, match="links of other weights"):
        attribution_alignments(translator, gold, "input-x-gradient", [0], kept)
    other = tmp_path / "other.jsonl"
    attribution_alignments(translator, gold, "input-x-gradient", [0], other)
    gold.french[0] = ["le", "chat", "noir"]
    with pytest.raises(OtherLinks, match="other sentences"):
        attribution_alignments(translator, gold, "input-x-gradient", [0], other)

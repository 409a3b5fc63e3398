"""Does attention align?: a gold sentence's human links on each model's α, the baseline left out with a note."""
import gradio as gr
import numpy as np

from attn_demo.decoding.grids import word_attention
from attn_demo.measures import alignment
from attn_demo.measures.alignment import word_spans
from attn_demo.ui.alignment_check import AlignmentCheckSection
from conftest import plotly_figure


def gold_sentence(folder):
    """A Hansards-style gold folder of one sentence, "the red cat" / "le chat rouge", with its human links."""
    gold = folder / "gold"
    gold.mkdir()
    (gold / "test.e").write_text("the red cat\n")
    (gold / "test.f").write_text("le chat rouge\n")
    (gold / "test.wa.nonullalign").write_text("1 1 1 S\n1 2 3 S\n1 3 2 P\n")
    return gold


def test_the_alignment_check_leaves_the_baseline_out_with_a_note(models, tmp_path, monkeypatch):
    check = AlignmentCheckSection(models, gold_sentence(tmp_path))
    alpha = np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1]], dtype=np.float32)  # French words × English
    monkeypatch.setattr(check, "word_alpha", lambda key, number, grid=None: alpha)  # the toy vocabulary has no capitals
    grid, note, other_grid, other_note = check.show(1, False, "tiny-none", "tiny-bahdanau")
    assert grid is None and "no attention, so no α" in note
    assert other_grid is not None and "AER **0.00**" in other_note  # every argmax link is a human one
    np.testing.assert_array_equal(plotly_figure(other_grid).data[0].z, alpha)
    with gr.Blocks() as page:
        grid_picks = [gr.Textbox(), gr.Textbox()]
        check.render(gr.Checkbox(), [gr.Dropdown([("a", "tiny-none")], value="tiny-none"),
                                     gr.Dropdown([("b", "tiny-bahdanau")], value="tiny-bahdanau")], grid_picks)
    # a side's Layer or Head picked redraws that side's grid and line alone, not the other side's
    redraws = {dependency["targets"][0][0]: [page.blocks[i].elem_id for i in dependency["outputs"]]
               for dependency in page.config["dependencies"] if dependency["api_name"].endswith("_alignment_check")}
    assert redraws == {grid_picks[0]._id: ["left-gold-grid", "left-gold-score"],
                       grid_picks[1]._id: ["right-gold-grid", "right-gold-score"]}


def test_a_transformers_check_reads_the_layer_and_head_picked_on_its_side(models, tmp_path, monkeypatch):
    check = AlignmentCheckSection(models, gold_sentence(tmp_path))
    monkeypatch.setattr(alignment, "model_input", lambda words: words)  # the toy vocabulary has no capitals
    model = next(model for model in models if model.key == "tiny-transformer")
    result = model.translator.force_decode("the red cat", "le chat rouge")
    picked, note, shown, _ = check.show(1, False, "tiny-transformer", "tiny-transformer", "2.3", "")
    assert picked is not None, note
    english = word_spans(result.source_tokens[:-1], ["the", "red", "cat"])
    french = word_spans(result.target_tokens[:-1], ["le", "chat", "rouge"])
    expected = word_attention(result.heads.cross[1, 2], english, french)
    np.testing.assert_allclose(plotly_figure(picked).data[0].z, expected, atol=1e-6)
    np.testing.assert_allclose(plotly_figure(shown).data[0].z, word_attention(result.attention, english, french), atol=1e-6)
    assert "layer 2, head 3" in plotly_figure(picked).layout.title.text
    assert check.show_side(1, False, "tiny-transformer", "2.3") == [picked, note]  # a pick on one side redraws it alone
    read = []  # every model call goes through Model.run: another head of a sentence read decodes nothing
    monkeypatch.setattr(model, "run", lambda *args: read.append(args))
    check.show(1, False, "tiny-transformer", "tiny-transformer", "1.1", "2.mean")
    assert read == []

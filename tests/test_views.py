"""What a translation's views draw, built once for the page and the export."""
import numpy as np

from attn_demo.catalogue import load_models
from attn_demo.checkpoint import save_checkpoint
from attn_demo.views import grid_figure, step_data
from conftest import DEVICE, plotly_figure, tiny_model


def test_grids_and_steps_come_from_the_sides_translations(tmp_path, toy_tokenizers, attention):
    save_checkpoint(tmp_path / "a", tiny_model(attention), *toy_tokenizers)
    save_checkpoint(tmp_path / "b", tiny_model("bahdanau", seed=3), *toy_tokenizers)
    models = {model.key: model for model in load_models(tmp_path, device=DEVICE)[0]}
    sides = [(models[key], models[key].view("I see the red cat.", 1)) for key in ("a", "b")]
    payload = step_data(sides)
    assert payload["steps"] == max(len(view["result"].target_tokens) for _, view in sides)
    assert [v["title"] for v in payload["views"]] == [model.title for model, _ in sides]
    model, view = sides[0]
    if attention == "none":
        assert grid_figure(model, view, False) is None  # no α, no grid
        return
    np.testing.assert_array_equal(plotly_figure(grid_figure(model, view, False)).data[0].z, view["result"].attention)
    by_word = plotly_figure(grid_figure(model, view, False, unit="words")).data[0].z
    np.testing.assert_allclose(by_word.sum(axis=1), 1, atol=1e-6)  # a French word's row still sums to 1

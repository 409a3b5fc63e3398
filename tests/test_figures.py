import json

import numpy as np
import plotly.graph_objects as go
import pytest

from attn_demo.figures import (ALIGNMENT_COLORSCALE, alignment_figure, gold_check_figure, label, length_figure, merge_step,
                               pca_projection, project, step_figure, step_views)
from conftest import assert_same_figure, untyped

SOURCE = ["▁the", "▁<img", "▁src=x", "▁the", "</s>"]  # S = 5, a repeated piece and markup
TARGET = ["▁le", "▁<b>", "</s>"]  # T = 3


def arrays(seed=0, D=7, H=6):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(len(TARGET), len(SOURCE))).astype(np.float32)
    attention = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    states = rng.normal(size=(len(SOURCE), D)).astype(np.float32)
    return scores, attention.astype(np.float32), states, attention @ states, rng.normal(size=(len(TARGET), H))


def all_strings(fig) -> str:
    """The figure as the browser receives it, after checking it against Plotly's schema."""
    go.Figure(fig.to_dict())  # validates every property the builders skipped validating
    return fig.to_json()


def test_label_escapes_markup_so_plotly_prints_it():
    assert label("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert label("▁R&D") == "▁R&amp;D"


def test_alignment_grid_draws_attention_on_a_fixed_shared_scale():
    _, attention, _, _, _ = arrays()
    fig = alignment_figure(SOURCE, TARGET, attention, "Bahdanau")
    heatmap = fig.data[0]
    np.testing.assert_array_equal(np.asarray(heatmap.z), attention)
    assert (heatmap.zmin, heatmap.zmax) == (0.0, 1.0)
    assert [list(stop) for stop in heatmap.colorscale] == ALIGNMENT_COLORSCALE
    # a repeated piece keeps its own column; markup is escaped in ticks and hover data
    assert list(fig.layout.xaxis.ticktext) == [label(p) for p in SOURCE] and len(fig.layout.xaxis.tickvals) == 5
    assert list(fig.layout.yaxis.ticktext) == [label(p) for p in TARGET]
    assert list(heatmap.customdata[1][1]) == ["▁&lt;b&gt;", "▁&lt;img"]
    assert "← %{customdata[1]}: α = %{z:.2f}" in heatmap.hovertemplate
    assert "<img" not in all_strings(fig) and "<b>" not in all_strings(fig)


def test_grid_is_readable_with_thirty_pieces_per_axis():
    n = 32
    attention = np.full((n, n), 1 / n, dtype=np.float32)
    pieces = [f"▁w{i}" for i in range(n)]
    fig = alignment_figure(pieces, pieces, attention, "long")
    assert fig.layout.height >= 20 * n and len(fig.layout.yaxis.ticktext) == n


def test_step_figure_shows_the_numbers_of_that_step():
    scores, attention, states, contexts, queries = arrays()
    t = 1
    projection = pca_projection(states)
    fig = step_figure(SOURCE, TARGET[t], queries[t], "s<sub>t</sub>", scores[t], attention[t], states, contexts[t],
                      projection, "Luong", large=True)
    query, score_bars, weight_bars, weighted, points, centre = fig.data
    np.testing.assert_allclose(np.asarray(query.z)[0], queries[t], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(score_bars.y), scores[t])  # the model's float32 numbers, copied
    np.testing.assert_array_equal(np.asarray(weight_bars.y), attention[t])
    best = int(attention[t].argmax())
    assert [c == weight_bars.marker.color[best] for c in weight_bars.marker.color].count(True) == 1
    rows = np.asarray(weighted.z)
    np.testing.assert_allclose(rows[:-1], attention[t][:, None] * states, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rows[-1], contexts[t], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rows[:-1].sum(0), rows[-1], atol=1e-5)
    assert len(set(weighted.y)) == len(SOURCE) + 1  # the repeated piece keeps its own row
    # the star sits at the α-weighted centroid of the projected annotations: exact in real numbers,
    # and here as close as the float32 points and c_t allow (float32 resolution ≈ 1.2e-7 relative)
    projected = np.stack([np.asarray(points.x), np.asarray(points.y)], 1)
    np.testing.assert_allclose([centre.x[0], centre.y[0]], attention[t] @ projected, rtol=1e-6, atol=1e-6)
    assert "<img" not in all_strings(fig) and centre.text[0].endswith("→ ▁&lt;b&gt;")  # the piece this step emitted
    titles = [a.text for a in fig.layout.annotations]
    assert [title.split(".")[0] for title in titles] == ["1", "2", "3", "4", "5"]
    # each stage's tensor shape for this sentence: S = 5 pieces, D = 7, query of H = 6
    assert titles[0].endswith("(1, 1, 6)") and titles[1].endswith("(1, 1, 5)") and titles[2].endswith("(1, 1, 5)")
    assert "(S, D) = (5, 7)" in titles[3] and titles[3].endswith("(B, 1, D) = (1, 1, 7)")
    assert fig.layout.font.size > step_figure(SOURCE, TARGET[t], queries[t], "q", scores[t], attention[t], states,
                                              contexts[t], projection, "Luong").layout.font.size


def test_step_views_hold_every_step_figure_in_compact_json():
    scores, attention, states, contexts, queries = arrays()
    projection = pca_projection(states)
    titles = [f"step {t + 1}" for t in range(len(TARGET))]
    views = step_views(SOURCE, TARGET, queries, "q", scores, attention, states, contexts, projection, titles)
    sent = json.loads(json.dumps(views))  # what the page receives
    assert "<img" not in json.dumps(sent) and "<b>" not in json.dumps(sent)
    decoded = untyped(sent)
    assert len(decoded["steps"]) == len(TARGET) and decoded["annotations"].shape == states.shape
    for t in range(len(TARGET)):
        expected = step_figure(SOURCE, TARGET[t], queries[t], "q", scores[t], attention[t], states, contexts[t],
                               projection, titles[t]).to_dict()
        page = merge_step(decoded["template"], decoded["steps"][t], decoded["annotations"])
        assert_same_figure(untyped(go.Figure(page, _validate=False).to_dict()), untyped(expected))
        assert page["layout"]["title"]["text"] == f"step {t + 1}"


def test_pca_projection_is_affine_and_handles_a_single_piece():
    _, attention, states, contexts, _ = arrays()
    projection = pca_projection(states)
    # c_t is float32 (≈ 1e-7 relative), projected in float64
    np.testing.assert_allclose(project(contexts, projection), attention @ project(states, projection), rtol=1e-6, atol=1e-6)
    mean, basis = pca_projection(states[:1])
    assert basis.shape == (7, 2)
    np.testing.assert_array_equal(project(states[:1], (mean, basis)), 0)  # one piece: no direction, exactly


@pytest.mark.parametrize("size", [2, 3, 30])
def test_pca_projection_spans_the_top_two_principal_directions(size):
    states = np.random.default_rng(size).normal(size=(size, 7)) * np.arange(1, 8)  # distinct variances
    _, basis = pca_projection(states)
    _, _, vt = np.linalg.svd(states - states.mean(0), full_matrices=False)
    rank = min(2, size - 1)  # centring removes one dimension
    # float64 throughout: the measured errors are ~1e-15, so 1e-12 leaves room for any BLAS and still
    # fails for a basis that is off by a rounding of float32 (~1e-7)
    np.testing.assert_allclose(basis.T @ basis, np.diag([1.0] * rank + [0.0] * (2 - rank)), atol=1e-12)
    np.testing.assert_allclose(basis @ basis.T, vt[:rank].T @ vt[:rank], atol=1e-12)  # same subspace as the SVD


@pytest.mark.parametrize("size", [1, 2, 30])
def test_figures_handle_any_sentence_length(size):
    rng = np.random.default_rng(size)
    pieces = [f"▁p{i}" for i in range(size)]
    attention = np.full((size, size), 1 / size, dtype=np.float32)
    states = rng.normal(size=(size, 4)).astype(np.float32)
    all_strings(alignment_figure(pieces, pieces, attention, "x"))
    all_strings(step_figure(pieces, pieces[0], np.ones(3), "q", attention[0], attention[0], states, attention[0] @ states,
                            pca_projection(states), "x"))


def test_gold_check_figure_outlines_the_human_links_and_marks_the_drawn_ones():
    english, french = ["the", "<b>red", "car"], ["la", "voiture", "rouge"]
    alpha = np.array([[0.9, 0.05, 0.05], [0.1, 0.2, 0.7], [0.1, 0.8, 0.1]], dtype=np.float32)
    sure, possible = {(0, 0), (2, 1)}, {(0, 0), (2, 1), (1, 2), (1, 1)}
    links = {(0, 0), (2, 1), (1, 2)}
    fig = gold_check_figure(english, french, alpha, sure, possible, links, "Luong")
    heatmap, dots = fig.data
    np.testing.assert_array_equal(np.asarray(heatmap.z), alpha)
    assert sorted(zip(dots.x, dots.y)) == sorted(links)
    boxes = {(int(round(s.x0 + 0.5)), int(round(s.y0 + 0.5))): s.line.dash for s in fig.layout.shapes}
    assert boxes == {(0, 0): "solid", (2, 1): "solid", (1, 2): "dot", (1, 1): "dot"}
    assert list(heatmap.customdata[2][1]) == ["rouge", "&lt;b&gt;red", "possible", "yes"]
    assert list(heatmap.customdata[1][0]) == ["voiture", "the", "no", "no"]
    assert "<b>red" not in all_strings(fig)


def test_length_figure_draws_one_line_per_model_from_the_card_numbers():
    curves = {"Luong <general>": {"1-10": {"n": 200, "bleu": 35.2}, "41-50": {"n": 198, "bleu": 2.1}},
              "Bahdanau": {"1-10": {"n": 200, "bleu": 35.0}, "41-50": {"n": 200, "bleu": 3.9}}}
    fig = length_figure(curves)
    luong, bahdanau = fig.data
    assert list(luong.x) == ["1–10", "41–50"] and list(luong.y) == [35.2, 2.1] and list(luong.customdata) == [200, 198]
    assert list(bahdanau.y) == [35.0, 3.9] and luong.name == "Luong &lt;general&gt;"
    assert "<general>" not in all_strings(fig)

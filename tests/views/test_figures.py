import html
import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.colors import sample_colorscale

from attn_demo.decoding.search import Candidate
from attn_demo.views.figures import (
    ALIGNMENT_COLORSCALE, HIGHLIGHT, KEPT, PRUNED, alignment_figure, attribution_figure, beam_search_figure,
    comparison_figure, gold_check_figure, grid_svg, label, length_figure, to_json)
from attn_demo.views.titles import TITLE_LINE, figure_title, grid_title
from conftest import plotly_figure

SOURCE = ["▁the", "▁<img", "▁src=x", "▁the", "</s>"]  # S = 5, a repeated piece and markup
TARGET = ["▁le", "▁<b>", "</s>"]  # T = 3


def softmax_rows(seed=0) -> np.ndarray:
    scores = np.random.default_rng(seed).normal(size=(len(TARGET), len(SOURCE)))
    return (np.exp(scores) / np.exp(scores).sum(1, keepdims=True)).astype(np.float32)


def all_strings(figure: dict) -> str:
    """The figure as the browser receives it, after checking it against Plotly's schema."""
    plotly_figure(figure)
    return to_json(figure)


def test_label_escapes_markup_so_plotly_prints_it():
    assert label("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert label("▁R&D") == "▁R&amp;D"


def test_alignment_grid_draws_attention_on_a_fixed_shared_scale():
    attention = softmax_rows()
    figure = alignment_figure(SOURCE, TARGET, attention, "Bahdanau")
    fig = plotly_figure(figure)
    heatmap = fig.data[0]
    np.testing.assert_array_equal(np.asarray(heatmap.z), attention)
    assert (heatmap.zmin, heatmap.zmax) == (0.0, 1.0)
    assert [list(stop) for stop in heatmap.colorscale] == ALIGNMENT_COLORSCALE
    # a repeated piece keeps its own column; markup is escaped in ticks and hover data
    assert list(fig.layout.xaxis.ticktext) == [label(p) for p in SOURCE] and len(fig.layout.xaxis.tickvals) == 5
    assert list(fig.layout.yaxis.ticktext) == [label(p) for p in TARGET]
    assert list(heatmap.customdata[1][1]) == ["▁&lt;b&gt;", "▁&lt;img"]
    assert "← %{customdata[1]}: α = %{z:.2f}" in heatmap.hovertemplate
    assert "<img" not in all_strings(figure) and "<b>" not in all_strings(figure)


def test_alignment_grid_says_in_words_where_each_french_piece_looks_most():
    attention = np.array([[0.1, 0.6, 0.1, 0.1, 0.1], [0.0, 0.0, 0.0, 0.3, 0.7], [0.9, 0.0, 0.0, 0.1, 0.0]], dtype=np.float32)
    text = plotly_figure(alignment_figure(SOURCE, TARGET, attention, "Luong: α<sub>tj</sub> by piece")).layout.meta["text"]
    assert text.startswith("Luong: α tj by piece: a grid of α, 3 French pieces (rows) by 5 English pieces (columns)")
    assert text.endswith("▁le ← ▁&lt;img (α 0.60); ▁&lt;b&gt; ← &lt;/s&gt; (α 0.70); &lt;/s&gt; ← ▁the (α 0.90).")


def test_alignment_grid_outlines_what_a_user_changed():
    attention = softmax_rows()
    assert not plotly_figure(alignment_figure(SOURCE, TARGET, attention, "α")).layout.shapes
    (row,) = plotly_figure(alignment_figure(SOURCE, TARGET, attention, "α", marked=(1, None))).layout.shapes  # piece 2 edited
    assert (row.x0, row.x1, row.y0, row.y1) == (-0.5, 4.5, 0.5, 1.5) and row.line.color == HIGHLIGHT
    (cell,) = plotly_figure(alignment_figure(SOURCE, TARGET, attention, "α", marked=(2, 3))).layout.shapes  # α of step 3 set onto piece 4
    assert (cell.x0, cell.x1, cell.y0, cell.y1) == (2.5, 3.5, 1.5, 2.5)


@pytest.mark.parametrize("large, cell", [(False, 24), (True, 34)])
def test_grid_cells_keep_their_size_and_labels_never_overlap(large, cell):
    """A 40-piece sentence is drawn 40 square cells wide, whatever the screen: the page scrolls a
    wide grid sideways instead of squeezing its labels onto each other."""
    for n in (3, 40):
        pieces = [f"▁w{i}" for i in range(n)]
        fig = plotly_figure(alignment_figure(pieces, pieces, np.full((n, n), 1 / n, dtype=np.float32), "α", large))
        margin = fig.layout.margin
        assert fig.layout.width - margin.l - margin.r >= cell * n and fig.layout.height - margin.t - margin.b >= cell * n
        assert fig.layout.xaxis.tickangle == -90  # one line of text wide: narrower than a cell
        assert len(fig.layout.xaxis.ticktext) == len(fig.layout.yaxis.ticktext) == n
    wide = plotly_figure(alignment_figure(["▁a"] * 40, ["▁b"] * 2, np.full((2, 40), 1 / 40, dtype=np.float32), "α", large))
    assert wide.layout.width > 40 * cell  # grows with the English pieces
    long_label = plotly_figure(alignment_figure(["▁" + "x" * 30], ["▁y"], np.ones((1, 1), dtype=np.float32), "α", large))
    assert long_label.layout.margin.t > 30 * 0.6 * long_label.layout.font.size  # room for the longest label


@pytest.mark.parametrize("large", [False, True])
def test_a_long_model_title_takes_a_line_of_its_own_instead_of_widening_the_grid(large):
    pieces, alpha = ["▁a", "▁b", "▁c"], np.full((3, 3), 1 / 3, dtype=np.float32)
    short, long = grid_title("Luong (general)"), grid_title("Transformer (scaled dot-product, multi-head)", grid="layer 2, head 3")
    assert "<br>" not in short and long == "Transformer (scaled dot-product, multi-head):<br>α<sub>tj</sub> by piece, layer 2, head 3"
    assert figure_title("Transformer (scaled dot-product, multi-head)", "integrated gradients by piece").count("<br>") == 1
    one_line = plotly_figure(alignment_figure(pieces, pieces, alpha, long.replace("<br>", " "), large)).layout
    two_lines = plotly_figure(alignment_figure(pieces, pieces, alpha, long, large)).layout
    assert two_lines.width < 0.7 * one_line.width  # as wide as its longer line, not as the whole title
    assert two_lines.margin.t - one_line.margin.t >= 1.2 * (two_lines.font.size + 3)  # a line's room above the grid
    assert two_lines.height - two_lines.margin.t == one_line.height - one_line.margin.t  # the cells keep their size


@pytest.mark.parametrize("size", [1, 2, 30])
def test_grid_handles_any_sentence_length(size):
    pieces = [f"▁p{i}" for i in range(size)]
    all_strings(alignment_figure(pieces, pieces, np.full((size, size), 1 / size, dtype=np.float32), "x"))


def test_gold_check_figure_outlines_the_human_links_and_marks_the_drawn_ones():
    english, french = ["the", "<b>red", "car"], ["la", "voiture", "rouge"]
    alpha = np.array([[0.9, 0.05, 0.05], [0.1, 0.2, 0.7], [0.1, 0.8, 0.1]], dtype=np.float32)
    sure, possible = {(0, 0), (2, 1)}, {(0, 0), (2, 1), (1, 2), (1, 1)}
    links = {(0, 0), (2, 1), (1, 2)}
    figure = gold_check_figure(english, french, alpha, sure, possible, links, "Luong")
    fig = plotly_figure(figure)
    heatmap, dots = fig.data
    np.testing.assert_array_equal(np.asarray(heatmap.z), alpha)
    assert sorted(zip(dots.x, dots.y)) == sorted(links)
    boxes = {(int(round(s.x0 + 0.5)), int(round(s.y0 + 0.5))): s.line.dash for s in fig.layout.shapes}
    assert boxes == {(0, 0): "solid", (2, 1): "solid", (1, 2): "dot", (1, 1): "dot"}
    assert list(heatmap.customdata[2][1]) == ["rouge", "&lt;b&gt;red", "possible", "yes"]
    assert list(heatmap.customdata[1][0]) == ["voiture", "the", "no", "no"]
    assert "<b>red" not in all_strings(figure)
    assert ("Links drawn from α: la ← the, voiture ← car, rouge ← &lt;b&gt;red. Human links, sure: la ← the, voiture ← car; "
            "possible only: voiture ← &lt;b&gt;red, rouge ← &lt;b&gt;red.") in fig.layout.meta["text"]


def test_length_figure_draws_one_line_per_model_from_the_card_numbers():
    curves = {"Luong <general>": {"1-10": {"n": 200, "bleu": 35.2}, "41-50": {"n": 198, "bleu": 2.1}},
              "Bahdanau": {"1-10": {"n": 200, "bleu": 35.0}, "41-50": {"n": 200, "bleu": 3.9}}}
    figure = length_figure(curves)
    fig = plotly_figure(figure)
    luong, bahdanau = fig.data
    assert list(luong.x) == ["1–10", "41–50"] and list(luong.y) == [35.2, 2.1] and list(luong.customdata) == [200, 198]
    assert list(bahdanau.y) == [35.0, 3.9] and luong.name == "Luong &lt;general&gt;"
    assert "<general>" not in all_strings(figure)
    assert fig.layout.xaxis.automargin and fig.layout.yaxis.automargin  # the margin grows to the tick labels ("40", not "0")
    assert fig.layout.meta["text"].endswith("Luong &lt;general&gt;: 1–10 words 35.2, 41–50 words 2.1; "
                                            "Bahdanau: 1–10 words 35.0, 41–50 words 3.9.")


def test_comparison_figure_draws_each_models_test_and_long_input_bleu_and_leaves_gaps_unmeasured():
    rows = [{"title": "Luong <general>", "test_bleu": 39.25, "long_41_50_bleu": 40.4},
            {"title": "No attention (baseline)", "test_bleu": 37.0, "long_41_50_bleu": None}]
    figure = comparison_figure(rows)
    fig = plotly_figure(figure)
    test, long = fig.data
    assert list(test.y) == ["Luong &lt;general&gt;", "No attention (baseline)"] and list(test.x) == [39.25, 37.0]
    assert list(long.x) == [40.4, None]  # not measured: no bar, not a zero
    assert fig.layout.meta["text"].endswith("Luong &lt;general&gt;: test set 39.2, 41–50 words 40.4; "
                                            "No attention (baseline): test set 37.0, 41–50 words not measured.")
    assert "<general>" not in all_strings(figure)


def test_comparison_figure_breaks_a_long_title_into_lines_and_says_it_whole():
    title = "Transformer (scaled dot-product, multi-head) · tiny"
    fig = plotly_figure(comparison_figure([{"title": title, "test_bleu": 38.9, "long_41_50_bleu": 41.3}]))
    lines = fig.data[0].y[0].split("<br>")
    assert " ".join(lines) == title and len(lines) == 3 and max(map(len, lines)) <= TITLE_LINE
    assert f"{title}: test set 38.9" in fig.layout.meta["text"]  # a screen reader hears the title in one piece


def test_attribution_figure_is_signed_and_centred_on_zero():
    scores = np.array([[0.5, -2.0, 0.1, 0.0, 1.0], [0.2, 0.3, -0.1, 0.0, 0.4], [0.0, 0.1, 0.2, 0.3, -0.4]], dtype=np.float32)
    figure = attribution_figure(SOURCE, TARGET, scores, "Luong <general>: integrated gradients")
    fig = plotly_figure(figure)
    heatmap = fig.data[0]
    assert (heatmap.zmin, heatmap.zmax) == (-2.0, 2.0) and np.array_equal(heatmap.z, scores)  # white is exactly 0
    assert list(fig.layout.xaxis.ticktext) == [label(p) for p in SOURCE] and "A = " in heatmap.hovertemplate
    assert "<general>" not in all_strings(figure) and "<img" not in all_strings(figure)
    assert fig.layout.meta["text"].endswith("▁le ← ▁&lt;img (A -2.00); ▁&lt;b&gt; ← &lt;/s&gt; (A +0.40); "
                                            "&lt;/s&gt; ← &lt;/s&gt; (A -0.40).")  # the largest in size, its sign kept


def test_the_beam_search_figure_draws_every_candidate_at_its_step_and_rank_and_colours_the_n_best():
    C = Candidate
    weighed = [C(1, -1, 5, -0.2, -0.2, "kept"), C(1, -1, 6, -1.0, -1.0, "kept"), C(1, -1, 7, -3.0, -3.0, "pruned"),
               C(2, 0, 3, -0.1, -0.3, "ended"), C(2, 1, 8, -0.5, -1.5, "kept"), C(2, 0, 9, -2.0, -2.2, "pruned"),
               C(3, 4, 3, -0.4, -1.9, "ended")]
    pieces = ["▁le", "▁<b>", "▁un", "</s>", "▁chat", "▁x", "</s>"]
    figure = beam_search_figure(weighed, pieces, [["▁le", "</s>"]])
    fig = plotly_figure(figure)
    *lines, points = fig.data
    assert list(points.x) == [1, 1, 1, 2, 2, 2, 3] and list(points.y) == [0, 1, 2, 0, 1, 2, 0]  # most probable on top
    colours = list(points.textfont.color)
    assert colours[0] == colours[3] == HIGHLIGHT  # the best hypothesis, ▁le </s>
    assert colours[1] == colours[4] == colours[6] == KEPT and colours[2] == colours[5] == PRUNED
    assert list(points.text)[3] == "&lt;/s&gt; #1" and "▁&lt;b&gt;" in points.text
    assert points.customdata[3][0] == pytest.approx(np.exp(-0.1)) and points.customdata[3][2] == "ended: hypothesis #1"
    assert points.customdata[6][2] == "ended: a hypothesis outside the n shown"
    assert points.customdata[4][3] == "▁&lt;b&gt;"  # its beginning, escaped
    red = next(line for line in lines if line.line.color == HIGHLIGHT)
    assert list(red.x) == [1, 2, None] and list(red.y) == [0, 0, None]  # ▁le → </s>
    assert sum(x is None for line in lines for x in line.x) == 4  # an edge for every candidate after step 1
    assert fig.layout.meta["text"].endswith("Over 3 output steps it weighed 7 extensions: kept 3, finished 2 hypotheses, "
                                            "pruned 2. The best, as pieces: #1 ▁le &lt;/s&gt;.")
    assert "<b>" not in all_strings(figure)
    assert "coverage term" not in points.hovertemplate + fig.layout.yaxis.title.text  # ranked by log p alone


def test_a_beam_ranked_at_every_step_says_so_and_gives_each_candidate_s_coverage_term():
    C = Candidate
    weighed = [C(1, -1, 5, -0.2, -0.2, "kept", -0.5), C(1, -1, 6, -0.1, -0.1, "pruned", -2.0),
               C(2, 0, 3, -0.1, -0.3, "ended", -0.6)]
    fig = plotly_figure(beam_search_figure(weighed, ["▁le", "▁la", "</s>"], [["▁le", "</s>"]]))
    points = fig.data[-1]
    assert "coverage term: %{customdata[4]:.2f}" in points.hovertemplate and points.customdata[1][4] == -2.0
    assert fig.layout.yaxis.title.text == "rank at the step, by log p + coverage term"


def every_figure() -> list:
    """One figure of each builder, with markup in its labels."""
    attention = softmax_rows()
    weighed = [Candidate(1, -1, 5, -0.2, -0.2, "kept"), Candidate(1, -1, 7, -3.0, -3.0, "pruned"),
               Candidate(2, 0, 3, -0.1, -0.3, "ended")]
    return [alignment_figure(SOURCE, TARGET, attention, "α", marked=(2, 3)),
            attribution_figure(SOURCE, TARGET, attention - 0.2, "A", unit="words"),
            gold_check_figure(["the", "<b>red"], ["la", "rouge"], attention[:2, :2], {(0, 0)}, {(0, 0), (1, 1)}, {(1, 1)}, "g"),
            length_figure({"Luong <general>": {"1-10": {"n": 200, "bleu": 35.2}}}),
            comparison_figure([{"title": "<i>dot", "test_bleu": 37.5, "long_41_50_bleu": None}]),
            beam_search_figure(weighed, ["▁le", "▁<b>", "</s>"], [["▁le", "</s>"]])]


@pytest.mark.parametrize("figure", every_figure(), ids=lambda figure: figure["data"][-1]["type"])
def test_to_json_writes_each_figure_as_plotly_writes_it(figure):
    written = to_json(figure)
    assert json.loads(written) == json.loads(go.Figure(figure, _validate=False).to_json())  # arrays typed alike
    assert not {"<", ">", "/"} & set(written)  # escaped as plotly.py escapes them: safe inside an HTML script


def test_the_light_grid_draws_the_figures_cells_colours_labels_and_text_as_plain_svg():
    """The SVG a phone sees before plotly.js has loaded: one cell a (t, j) with α's colour on the fixed [0, 1]
    scale and its number in its title, the labels escaped, the figure's text alternative as its label."""
    attention = np.array([[0.9, 0.1, 0.0], [0.2, 0.3, 0.5]], dtype=np.float32)
    figure = alignment_figure(["▁a", "<b>", "</s>"], ["▁x", "</s>"], attention, "Model: α")
    svg = grid_svg(figure)
    cells = re.findall(r'<rect [^>]*fill="([^"]+)"><title>([^<]*)</title>', svg)
    assert len(cells) == attention.size
    assert [fill for fill, _ in cells] == sample_colorscale(ALIGNMENT_COLORSCALE, [float(v) for v in attention.ravel()])
    assert cells[5][1] == "&lt;/s&gt; ← &lt;/s&gt;: α = 0.50" and cells[1][1] == "▁x ← &lt;b&gt;: α = 0.10"
    assert "<b>" not in svg and svg.count("&lt;b&gt;") == 3  # its column label and its two cells' titles, as text
    assert f'aria-label="{html.escape(figure["layout"]["meta"]["text"])}"' in svg and 'role="img"' in svg

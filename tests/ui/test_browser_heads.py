"""A real browser (Debian's Chromium, driven by Playwright) opens a link with a Transformer on a side, as a teacher
would, and checks what the page draws of its heads against the model's own numbers."""
import dataclasses
import html
import json

import numpy as np
import pytest
import torch

from attn_demo.checkpoints.folder import build_model, save_checkpoint
from attn_demo.models.attention import KINDS
from attn_demo.models.tokenizer import Tokenizer
from attn_demo.translator import load_translator
from attn_demo.ui.explore import head_off_summary
from attn_demo.views.figures import alignment_text
from attn_demo.views.titles import grid_title
from benchmarks.server import Server
from conftest import ROOT, tiny_config
from test_browser import (
    SCREENSHOT_DIR, caption_shows, screenshot_part, serious_violations, strip_markdown)
from test_browser_network import DRAWN_NETWORK, NETWORK_OVERLAPS

pytestmark = pytest.mark.browser
SENTENCE = "The cat sat on the mat."
KEY = "tiny-transformer"
# what heads_view.js drew for a side: the small multiples' α, the self-attention grids, the step view's query
DRAWN = """(side) => JSON.stringify({
    cells: [...document.querySelectorAll(`#${side}-heads .attn-head-cell`)].map((b) => [b.getAttribute("aria-label"),
        b.getAttribute("aria-pressed"), b.querySelector("img").attnValues.map((row) => [...row])]),
    self: [...document.querySelectorAll(`#${side}-self-attention .attn-self-svg`)].map((svg) => svg.attnValues.map((row) => [...row])),
    query: [...(document.querySelector(`#${side}-step canvas`).attnValues || [[]])[0]],  // drawn for a head, not a mean
    grid: Array.from(document.querySelector(`#${side}-grid .js-plotly-plot, #${side}-grid.js-plotly-plot`)._fullData[0].z,
                     (row) => [...row]),  // the page's grid, or the exported file's
    title: document.querySelector(`#${side}-step .attn-step-title`).textContent,
})"""


@pytest.fixture(scope="module")
def transformer_app(tmp_path_factory):
    """`python app.py` serving the shipped checkpoints and a tiny Transformer on the shipped tokenizers (named in
    ATTN_DEMO_MODELS, as a user adds one), and that Transformer's translator, to compare the page with."""
    folder = tmp_path_factory.mktemp("models") / KEY
    source, target = (Tokenizer(ROOT / "checkpoints" / "luong-en-fr" / f"{side}.model") for side in ("source", "target"))
    torch.manual_seed(0)
    config = dataclasses.replace(tiny_config("transformer"), src_vocab_size=len(source), tgt_vocab_size=len(target))
    save_checkpoint(folder, build_model(config).eval(), source, target)
    server = Server(ROOT / "app.py", log=folder.parent / "app.log", env={"ATTN_DEMO_MODELS": str(folder)})
    yield server.url, load_translator(folder, "cpu")
    server.stop()


@pytest.mark.parametrize("width", [1440, 390])
def test_a_link_opens_a_transformers_heads_and_a_tap_picks_one(browser, transformer_app, width, tmp_path):  # noqa: F811
    url, translator = transformer_app
    result = translator.translate(SENTENCE)
    heads = result.heads
    L, H = heads.cross.shape[:2]
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}?q={SENTENCE}&left=luong-en-fr&right={KEY}", wait_until="load")
    page.wait_for_function(caption_shows("right", "Step 1 of"), timeout=90_000)
    page.locator("#right-grid .js-plotly-plot").wait_for(timeout=60_000)
    drawn = json.loads(page.evaluate(DRAWN, "right"))
    # every layer × (mean, each head) drawn from the model's α, the shown grid pressed
    assert len(drawn["cells"]) == L * (H + 1)
    cells = {label.split(":")[0]: (pressed, np.array(alpha)) for label, pressed, alpha in drawn["cells"]}
    for layer in range(L):
        np.testing.assert_allclose(cells[f"layer {layer + 1}, mean of heads"][1], heads.cross[layer].mean(0), atol=1e-6)
        for head in range(H):
            np.testing.assert_allclose(cells[f"layer {layer + 1}, head {head + 1}"][1], heads.cross[layer, head], atol=1e-7)
    assert [name for name, (pressed, _) in cells.items() if pressed == "true"] == ["layer 1, mean of heads"]  # config's shown
    np.testing.assert_allclose(drawn["grid"], heads.cross[0].mean(0), atol=1e-6)
    assert_the_network_view_draws_the_pick(page, result, heads.cross[0].mean(0), "layer 1, mean of heads")
    assert page.locator("#left-heads").inner_text().startswith("One score, one grid")  # a GRU model says what it lacks
    assert "No self-attention" in page.locator("#left-self-attention").inner_text()
    screenshot_part(page, "#section-translate", SCREENSHOT_DIR / f"transformer-{width}.png")

    # a tap on a small multiple: the grid, its note, the controls, the self-attention and the step view follow
    page.get_by_role("button", name="layer 2, head 3", exact=False).click()
    page.wait_for_function("() => document.querySelector('#right-coverage .coverage-pick:not([hidden])').innerText.includes('Layer 2, head 3')",
                           timeout=30_000)
    page.wait_for_function(f"() => document.querySelector('#right-grid .js-plotly-plot')._fullData[0].z[0][0] === "
                           f"{float(heads.cross[1, 2, 0, 0])}", timeout=30_000)
    drawn = json.loads(page.evaluate(DRAWN, "right"))
    np.testing.assert_allclose(drawn["grid"], heads.cross[1, 2], atol=1e-7)
    assert_the_network_view_draws_the_pick(page, result, heads.cross[1, 2], "layer 2, head 3")
    # drawn in the browser alone, it says what the server's grid of that head would: its title and what a reader hears
    # the shipped Transformer shares this one's kind, so the page names the tiny one by its key too
    title = grid_title(f"{KINDS['transformer'].title} · {KEY}", "pieces", "layer 2, head 3")
    page.wait_for_function("(text) => document.querySelector('#right-grid .js-plotly-plot').getAttribute('aria-label') === text",
                           arg=html.unescape(alignment_text(result.source_tokens, result.target_tokens, heads.cross[1, 2], title)),
                           timeout=10_000)
    assert page.get_by_role("combobox", name="Layer", exact=True).input_value() == "1"  # 0-based values, shown from 1
    assert page.get_by_role("combobox", name="Head", exact=True).input_value() == "2"
    encoder, decoder = (np.array(grid) for grid in drawn["self"])
    np.testing.assert_allclose(encoder, heads.encoder[0, 2], atol=1e-7)  # the encoder has one layer: its last
    np.testing.assert_allclose(decoder, heads.decoder[1, 2], atol=1e-7)
    assert np.triu(decoder, 1).max() == 0  # masked: a step reads nothing written after it
    np.testing.assert_allclose(drawn["query"], heads.queries[1, 2, 0], atol=1e-7)  # q_t of step 1
    assert "layer 2, head 3" in drawn["title"]
    # a step change leaves every head and the self-attention as drawn: what a head read depends on the pick, not the step
    page.evaluate("""() => { window.pickMutations = 0;
        const observer = new MutationObserver((changes) => { window.pickMutations += changes.length; });
        for (const region of ['#right-heads', '#right-self-attention']) observer.observe(document.querySelector(region),
            { subtree: true, childList: true, attributes: true, characterData: true }); }""")
    page.locator("#translate-steps-slider input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(caption_shows("right", "Step 2 of"), timeout=10_000)
    assert page.evaluate("() => window.pickMutations") == 0
    if width == 1440:
        assert_the_export_shows_the_pick(browser, page, tmp_path, heads)

    # the Head control picks too, by keyboard: the mean of the layer's heads
    page.get_by_role("combobox", name="Head", exact=True).select_option("mean")
    page.wait_for_function("() => document.querySelector('#right-coverage .coverage-pick:not([hidden])').innerText.includes('Layer 2, mean of heads')",
                           timeout=30_000)
    assert errors == []
    regions = ["#right-grid", "#right-heads", "#right-self-attention", "#right-network", "#right-step"]
    assert serious_violations(page, {"include": regions}) == []
    page.close()


def assert_the_network_view_draws_the_pick(page, result, alpha, name):
    """The side's network view is a decoder layer, the picked one, in the order it computes (pre-norm sublayers, then
    the output layer), its h_j weighed by the pick's α and its emitted piece the model's, at step 1; no label overlaps
    another or leaves its box."""
    page.wait_for_function("(name) => document.querySelector('#right-network svg').getAttribute('aria-label')"
                           ".startsWith(`Step 1, ${name}:`)", arg=name, timeout=30_000)
    drawn = page.evaluate(DRAWN_NETWORK, "right")
    assert drawn["nodes"] == ["previous", "self", "encoder", "cross", "feedforward", "above", "output", "emitted"]
    best = result.source_tokens[int(alpha[0].argmax())]
    assert drawn["attended_cell"] == best and f"α puts {alpha[0].max():.2f} on {best};" in drawn["label"]
    assert drawn["emitted"] == result.target_tokens[0] and drawn["label"].endswith(f"writes {result.target_tokens[0]}.")
    assert "LN(" in page.locator("#right-network svg").text_content()  # a pre-norm layer: each sublayer reads LN(x_t)
    assert page.evaluate(NETWORK_OVERLAPS, "right") == []
    page.locator("#right-network").screenshot(path=str(SCREENSHOT_DIR / f"network-transformer-{page.viewport_size['width']}.png"))


def assert_the_export_shows_the_pick(browser, page, folder, heads):  # noqa: F811
    """The page's exported file, opened offline, draws the layer and head picked on the page from the model's numbers."""
    page.get_by_role("button", name="Export this translation as one interactive HTML file (works offline)").click()
    link = page.locator("#export-file a").first
    link.wait_for(timeout=60_000)
    path = folder / "export.html"
    path.write_bytes(page.request.get(link.get_attribute("href")).body())
    offline = browser.new_page(viewport={"width": 1440, "height": 900})
    offline.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    offline.goto(f"file://{path}", wait_until="load")
    offline.wait_for_function(caption_shows("right", "Step 1 of"), timeout=30_000)
    drawn = json.loads(offline.evaluate(DRAWN, "right"))
    assert "layer 2, head 3" in drawn["title"]
    np.testing.assert_allclose(drawn["grid"], heads.cross[1, 2], atol=1e-7)
    np.testing.assert_allclose(drawn["self"][1], heads.decoder[1, 2], atol=1e-7)
    offline.close()


# Counts the changes to the step views' elements from now on: elements added or removed, and texts changed
COUNT_STEP_VIEW_CHANGES = """() => {
    window.stepViewChanges = { childList: 0, characterData: 0 };
    new MutationObserver((records) => records.forEach((record) => {
        const element = record.target.nodeType === Node.ELEMENT_NODE ? record.target : record.target.parentElement;
        if (element.closest(".attn-step-view")) window.stepViewChanges[record.type] += 1;
    })).observe(document.body, { childList: true, characterData: true, subtree: true });
}"""


def test_a_step_change_writes_the_step_views_numbers_into_their_elements(browser, transformer_app):  # noqa: F811
    """A GRU's and a Transformer head's step views take a step's numbers into the elements they have (a text changed
    where it stands, the bars' axis kept for the whole translation): an element made or removed at every step would be
    laid out, painted and collected anew, and would wake every page watcher (page_changes.js)."""
    url, _ = transformer_app
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{url}?q={SENTENCE}&left=luong-en-fr&right={KEY}", wait_until="load")
    page.wait_for_function(caption_shows("right", "Step 1 of"), timeout=90_000)
    # steps both sides take ("Step 1 of T"; a side past its last step says so in its caption)
    steps = min(5, *(int(page.locator(f"#{side}-step .attn-step-caption").inner_text().split(" of ")[1].split()[0])
                     for side in ("left", "right")))
    page.select_option("#right-heads-head", "1")  # a head's own query, keys, scores and values, not the mean's
    page.wait_for_function(caption_shows("right", "Step 1 of"), timeout=30_000)
    page.evaluate(COUNT_STEP_VIEW_CHANGES)
    page.locator("#translate-steps-slider input[type=range]").focus()
    for t in range(2, steps + 1):
        page.keyboard.press("ArrowRight")
        for side in ("left", "right"):
            page.wait_for_function(caption_shows(side, f"Step {t} of"), timeout=30_000)
    changes = page.evaluate("() => window.stepViewChanges")
    assert changes["characterData"] > 0 and changes["childList"] == 0, changes
    page.close()


def test_the_explorer_turns_a_head_off_and_shows_what_the_model_writes_without_it(browser, transformer_app):  # noqa: F811
    url, translator = transformer_app
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}?q={SENTENCE}&left=luong-en-fr&right={KEY}", wait_until="load")
    page.wait_for_function(caption_shows("right", "Step 1 of"), timeout=90_000)
    page.locator("#explore-model input").fill(KEY)  # the explorer follows the left side: pick the Transformer
    page.get_by_role("option", name=KEY, exact=False).first.click()
    page.get_by_role("button", name="Show the beam").click()
    page.locator("#explore-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)  # hypothesis 1, picked
    page.locator("#explore-head-off input").click()
    page.get_by_role("option", name="layer 1, head 2", exact=True).click()  # a head with a layer above it
    page.wait_for_function("() => document.querySelector('#explore-result').innerText.includes('What if layer 1, head 2')",
                           timeout=60_000)
    page.locator("#explore-result-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=30_000)
    # the explorer's beam (k = 5) with the model's own ranking, penalty sliders at 0, searched again without the head
    ranking = dataclasses.replace(translator.penalties, coverage=0.0, repeat=0.0, stepwise=False)
    every = translator.translate(SENTENCE, beam_size=5, n_best=5, penalties=ranking)[0]
    off = translator.translate(SENTENCE, beam_size=5, penalties=ranking, heads_off=[(0, 1)])
    assert off.log_prob != every.log_prob  # the head mattered: a page that kept it on would show another log p
    words = lambda text: " ".join(strip_markdown(html.unescape(text)).split())
    assert words(page.locator("#explore-result").inner_text()) == words(head_off_summary("layer 1, head 2", every, off))
    drawn = page.evaluate("() => Array.from(document.querySelector('#explore-result-grid .js-plotly-plot')._fullData[0].z,"
                          " (row) => [...row])")
    np.testing.assert_allclose(drawn, off.attention, atol=1e-6)
    page.wait_for_function(caption_shows("explore-what-if", f"Step 1 of {len(off.target_tokens)}"), timeout=30_000)
    assert errors == []
    page.close()


def test_a_rest_client_turns_a_head_off_by_naming_it(transformer_app):
    """A REST client never receives the head picker's choices for its model: it names a head ("1.2"), and a name that
    is not one of the model's heads gets a message saying what the heads are called."""
    from gradio_client import Client

    url, translator = transformer_app
    client = Client(url, verbose=False)
    client.predict(SENTENCE, 1, False, "pieces", "luong-en-fr", KEY, api_name="/translate")
    client.predict(KEY, 5, 5, False, api_name="/explore_beam")
    summary = client.predict("1.2", False, api_name="/explore_head_off")[0]
    ranking = dataclasses.replace(translator.penalties, coverage=0.0, repeat=0.0, stepwise=False)
    every = translator.translate(SENTENCE, beam_size=5, n_best=5, penalties=ranking)[0]
    off = translator.translate(SENTENCE, beam_size=5, penalties=ranking, heads_off=[(0, 1)])
    assert summary == head_off_summary("layer 1, head 2", every, off)
    assert "named layer.head from 1" in client.predict("9.9", False, api_name="/explore_head_off")[0]

"""A real browser (Debian's Chromium, driven by Playwright) uses the running app as a student would: the translate
section; the helpers the other browser tests import (test_browser_<section>.py)."""
import json
import os
from pathlib import Path
from urllib.request import urlopen

import numpy as np
import pytest
from axe_playwright_python.sync_playwright import Axe

from attn_demo.ui.translate import EXAMPLES, SIDES, STEPS
from attn_demo.ui.why_attention import LONG_EXAMPLE
from attn_demo.views.steps import EOS_NOTE, VECTOR_COLORSCALE, project
from benchmarks.bench_app import AFTER_TRANSLATE
from conftest import ROOT

pytestmark = pytest.mark.browser
SCREENSHOT_DIR = ROOT / "artifacts"
WHOLE_PARTS = os.environ.get("ATTN_DEMO_SCREENSHOTS") == "whole"  # screenshot_part: whole sections, not their first screen


GROUP = f"window.attnSteps.group({STEPS.element_id!r})"  # the translate section's step views
# the value of every bar of a step view, panel by panel (e, α, the coverage so far, then the attribution if drawn)
BAR_VALUES = """(side) => [...document.querySelectorAll(`#${side}-step .attn-bars`)].map(
    (svg) => [...svg.querySelectorAll(".attn-bar")].map((bar) => Number(bar.dataset.value)))"""


def open_app(page, url: str):
    """Open the page and wait until it shows its opening translation, as a user sees it before typing: the step
    views, and the interactive grids (drawn once Plotly has loaded, after the page's own first grids)."""
    page.goto(url, wait_until="load")
    for side in SIDES:
        page.wait_for_function(caption_shows(side, "Step 1 of"), timeout=60_000)
        page.locator(f"#{side}-grid .js-plotly-plot").wait_for(timeout=60_000)


# the ids of the plots drawn empty on the page (Gradio's empty-plot icon, which reads as a broken image; a box
# keeping a figure's room until it is drawn shows none)
EMPTY_FRAMES = """() => [...document.querySelectorAll('.empty[aria-label="Empty value"]')]
    .filter((e) => e.offsetParent !== null && getComputedStyle(e).visibility === 'visible').map((e) => e.closest('.block')?.id)"""


# the ids of the plots wider than their box where that box does not scroll sideways: labels out of reach
UNREACHABLE_FIGURES = """() => [...document.querySelectorAll('.js-plotly-plot')].filter((plot) => plot.offsetParent !== null)
    .map((plot) => [plot.closest('.block'), plot.querySelector('.main-svg').getBoundingClientRect().width])
    .filter(([block, width]) => width > block.clientWidth + 1 && !['auto', 'scroll'].includes(getComputedStyle(block).overflowX))
    .map(([block]) => block.id)"""


# the tick labels of every drawn plot that its own figure cuts off (e.g. "40" read as "0" at the left edge)
CLIPPED_TICKS = """() => [...document.querySelectorAll('.js-plotly-plot')].filter((plot) => plot.offsetParent !== null)
    .flatMap((plot) => {
        const box = plot.querySelector('.main-svg').getBoundingClientRect();
        return [...plot.querySelectorAll('.xtick text, .ytick text')].map((t) => [t.textContent, t.getBoundingClientRect()])
            .filter(([text, r]) => text && r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5
                                                          || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5))
            .map(([text]) => `${plot.closest('.block')?.id}: ${text}`);
    })"""


# what a screen reader is told each drawn plot is, by the id of its block: [role, aria-label]
FIGURE_TEXTS = """() => Object.fromEntries([...document.querySelectorAll('.js-plotly-plot')].filter((p) => p.offsetParent !== null)
    .map((plot) => [plot.closest('.block')?.id, [plot.getAttribute('role'), plot.getAttribute('aria-label')]]))"""


def screenshot_part(page, selector: str, path: Path):
    """A picture of one part of the page (SCREENSHOT_DIR): the screen at the part's top; the part whole with
    ATTN_DEMO_SCREENSHOTS=whole, cut from the whole page's picture as the page is now (a tall section costs the
    browser 5–30 s to paint on two cores, and an element's own screenshot waits until it holds still for two frames,
    which a busy machine may not give it for seconds)."""
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    if not WHOLE_PARTS:
        page.evaluate("(selector) => document.querySelector(selector).scrollIntoView()", selector)
        page.screenshot(path=str(path), full_page=False)
        return
    box = page.evaluate("""(selector) => { const r = document.querySelector(selector).getBoundingClientRect();
        return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height }; }""", selector)
    page.screenshot(path=str(path), full_page=True, clip=box)


WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def serious_violations(page, context=None) -> list:
    """axe-core's serious or critical WCAG 2.1 AA violations on the page, or in the parts `context` names (axe's
    context: a selector, or {"include": [selectors]}), as (rule, the elements it found)."""
    page.wait_for_timeout(500)  # reachable.js marks what scrolls once a frame: let the page settle
    violations = Axe().run(page, context=context, options=WCAG_AA).response["violations"]
    return [(v["id"], [n["target"] for n in v["nodes"]]) for v in violations if v["impact"] in ("serious", "critical")]


def strip_markdown(text: str) -> str:
    return text.replace("**", "")


def caption(page, side) -> str:
    return page.locator(f"#{side}-step .attn-step-caption").inner_text()


def caption_shows(side: str, text: str) -> str:
    """A wait_for_function body: the side's step caption includes text."""
    return f"() => (document.querySelector('#{side}-step .attn-step-caption') || {{}}).innerText?.includes({text!r})"


# What step_views.js drew for a side: every number it holds and how it drew it.
DRAWN_STEP = """(side) => {
    const view = document.querySelector(`#${side}-step .attn-step-view`);
    const numbers = (selector, key) => [...view.querySelectorAll(selector)].map((e) => Number(e.dataset[key]));
    const bars = (i) => [...view.querySelectorAll(".attn-bars")[i].querySelectorAll(".attn-bar")];
    // the bars as drawn: each shape "M x,y h w v height h -w z" of panel i's two paths, left to right, the highlighted one's flagged
    const shapes = (i) => [...view.querySelectorAll(".attn-bars")[i].querySelectorAll(".attn-bar-shapes")].flatMap((path) =>
        [...(path.getAttribute("d") || "").matchAll(/M([-\d.e]+),[-\d.e]+h[-\d.e]+v([-\d.e]+)/g)].map(
            (m) => ({ x: Number(m[1]), height: Number(m[2]), best: path.classList.contains("attn-bar-best") })))
        .sort((a, b) => a.x - b.x);
    const [strip, rows] = view.querySelectorAll("canvas");
    const peak = rows.attnValues.flatMap((row, r) => [...row].map((v, d) => [Math.abs(v), v, r, d])).sort((a, b) => b[0] - a[0])[0];
    const star = view.querySelector(".attn-star");
    return JSON.stringify({
        title: view.querySelector(".attn-step-title").textContent, caption: view.querySelector(".attn-step-caption").textContent,
        scores: bars(0).map((b) => Number(b.dataset.value)), weights: bars(1).map((b) => Number(b.dataset.value)),
        score_heights: shapes(0).map((b) => b.height), weight_heights: shapes(1).map((b) => b.height),
        weight_best: shapes(1).findIndex((b) => b.best),
        weight_labels: [...view.querySelectorAll(".attn-bars")[1].querySelectorAll(".attn-value")].map((t) => t.textContent),
        coverage: bars(2).map((b) => Number(b.dataset.value)),
        query: [...strip.attnValues[0]], rows: rows.attnValues.map((row) => [...row]),
        peak: { value: peak[1], colour: [...rows.getContext("2d").getImageData(peak[3], peak[2], 1, 1).data].slice(0, 3) },
        dots: numbers(".attn-pca circle", "weight"), star: [Number(star.dataset.x), Number(star.dataset.y)],
    });
}"""


def assert_page_draws_the_models_step(shipped, page, sentence, t):
    """Step t on the page shows exactly the model's numbers for it: e_tj and α_tj as bar heights,
    the query, α_tj·h_j multiplied in float32 as the model does, the model's own c_t, and the star at
    the projection of c_t."""
    state = shipped.translate.translate(sentence, 1, False).state
    for side, view in state["views"].items():
        result, i = view["result"], t - 1
        drawn = json.loads(page.evaluate(DRAWN_STEP, side))
        weights, best = result.attention[i], int(result.attention[i].argmax())
        assert f"how c{t} is formed" in drawn["title"]
        resting = f": {EOS_NOTE}" if best == len(weights) - 1 else ""  # the source's last piece is </s>
        assert drawn["caption"] == (f"Step {t} of {len(result.target_tokens)} — emitted {result.target_tokens[i]}; most attention "
                                    f"on {result.source_tokens[best]} (α = {weights[best]:.2f}){resting}")
        np.testing.assert_array_equal(np.float32(drawn["scores"]), result.scores[i])
        np.testing.assert_array_equal(np.float32(drawn["weights"]), weights)
        np.testing.assert_array_equal(np.float32(drawn["dots"]), weights)
        heights = np.asarray(drawn["weight_heights"])  # α on a fixed [0, 1] axis: heights in proportion
        np.testing.assert_allclose(heights, weights * heights[best] / weights[best], rtol=1e-4, atol=1e-3)
        assert drawn["weight_best"] == best  # the most-attended piece's bar is the highlighted one
        score_heights, scores = np.asarray(drawn["score_heights"]), np.abs(result.scores[i])
        np.testing.assert_allclose(score_heights, scores * score_heights.max() / scores.max(), rtol=1e-4, atol=1e-3)
        assert drawn["weight_labels"] == [f"{w:.2f}" for w in weights]
        np.testing.assert_array_equal(np.float32(drawn["coverage"]), result.attention[:t].cumsum(0)[-1])  # C so far
        np.testing.assert_array_equal(np.float32(drawn["query"]), result.queries[i])
        rows = np.float32(drawn["rows"])
        np.testing.assert_array_equal(rows[:-1], weights[:, None] * result.encoder_states)  # float32 products
        np.testing.assert_array_equal(rows[-1], result.contexts[i])  # the model's own c_t
        ends = {True: VECTOR_COLORSCALE[-1][1], False: VECTOR_COLORSCALE[0][1]}  # the largest |value| gets an end colour
        assert f"rgb({','.join(map(str, drawn['peak']['colour']))})" == ends[drawn["peak"]["value"] > 0]
        np.testing.assert_allclose(drawn["star"], project(result.contexts[i], view["projection"]), rtol=1e-5, atol=1e-5)


def test_translate_scrub_and_refuse_markup_in_a_real_browser(shipped, browser, app_url):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_app(page, app_url)
    page.get_by_role("textbox", name="English sentence").fill("The red car is in front of the house.")
    page.get_by_role("button", name="Translate").click()
    for side in SIDES:
        page.wait_for_function(f"() => document.querySelector('#{side}-text textarea').value.length > 0", timeout=60_000)
        page.locator(f"#{side}-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
        page.locator(f"#{side}-step .attn-step-view").wait_for(timeout=60_000)
        assert "Step 1 of" in caption(page, side)
    assert_page_draws_the_models_step(shipped, page, "The red car is in front of the house.", 1)
    calls = []  # events sent to the server (each joins its queue)
    page.on("request", lambda request: calls.append(request.url) if "/queue/join" in request.url else None)
    page.locator("#translate-steps").get_by_role("button", name="Next step ▶").click()
    page.wait_for_function(caption_shows("right", "Step 2 of"), timeout=30_000)
    assert_page_draws_the_models_step(shipped, page, "The red car is in front of the house.", 2)
    page.locator("#translate-steps-slider input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(caption_shows("left", "Step 3 of"), timeout=30_000)
    assert calls == []  # scrubbing is drawn in the browser: nothing asked of the server
    assert_page_draws_the_models_step(shipped, page, "The red car is in front of the house.", 3)

    page.locator("#translate-steps").get_by_role("button", name="▶ Play").click()  # about one step a second, then stop
    page.wait_for_function(caption_shows("left", "Step 5 of"), timeout=10_000)
    page.locator("#translate-steps").get_by_role("button", name="⏸ Stop").click()
    slider = page.locator("#translate-steps-slider input[type=range]")
    stopped_at = slider.input_value()
    page.wait_for_timeout(2500)
    assert slider.input_value() == stopped_at and page.locator("#translate-steps").get_by_role("button", name="▶ Play").is_visible()
    assert calls == []  # playing is scrubbing too
    assert_page_draws_the_models_step(shipped, page, "The red car is in front of the house.", int(stopped_at))
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "app.png"), full_page=WHOLE_PARTS)

    page.locator("#grid-unit").get_by_label("words").check()  # the grids by word: "house." is one column
    page.wait_for_function("() => [...document.querySelectorAll('#right-grid .xtick text')].some((t) => t.textContent === 'house.')",
                           timeout=30_000)
    page.locator("#grid-unit").get_by_label("pieces").check()
    page.wait_for_function("() => ![...document.querySelectorAll('#right-grid .xtick text')].some((t) => t.textContent === 'house.')",
                           timeout=30_000)
    assert calls == []  # the grids are redrawn from the session: no queued event (a class switching together)

    page.get_by_label("Large text (projector)").check()
    page.wait_for_function("() => document.body.classList.contains('attn-large')", timeout=10_000)
    page.wait_for_function("() => document.querySelector('#right-grid .js-plotly-plot .ytick text').style.fontSize === '20px'",
                           timeout=30_000)
    page.wait_for_function("() => document.querySelector('#right-step .attn-step-view').style.fontSize === '20px'", timeout=10_000)
    assert_page_draws_the_models_step(shipped, page, "The red car is in front of the house.", int(stopped_at))  # redrawn, same step
    screenshot_part(page, "#section-translate", SCREENSHOT_DIR / "app-large-text.png")
    page.get_by_label("Large text (projector)").uncheck()

    page.get_by_role("textbox", name="English sentence").fill("<img src=x onerror=alert(1)>")
    page.get_by_role("textbox", name="English sentence").press("Enter")
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('read as <unk>')", timeout=30_000)
    page.wait_for_function(caption_shows("right", "Step 1 of"), timeout=30_000)
    page.wait_for_timeout(1000)
    assert "'<'" in page.locator("#status").inner_text()  # the markup's characters are named as text
    assert "<unk>" in page.locator("#right-step .attn-bars").first.text_content()  # pieces drawn as text, not markup
    assert page.locator("img[src='x']").count() == 0
    assert dialogs == []
    page.get_by_role("textbox", name="English sentence").fill("我喜欢咖啡")  # mostly unknown: refused, the page cleared
    page.get_by_role("textbox", name="English sentence").press("Enter")
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('never seen')", timeout=30_000)
    page.wait_for_function("() => document.querySelectorAll('.attn-step-view').length === 0", timeout=10_000)
    page.screenshot(path=str(SCREENSHOT_DIR / "app-bad-input.png"), full_page=False)
    page.close()


# Whether two of the page's boxes (getBoundingClientRect) overlap by more than `slack` pixels, for the checks below.
OVERLAP = "const overlap = (p, q, slack = 0.5) => p.left < q.right - slack && q.left < p.right - slack && p.top < q.bottom - slack && q.top < p.bottom - slack;"
# Pairs of labels that overlap, figure by figure: Plotly's tick labels, axis titles and legend entries, and the
# step views' ticks and point labels (those written; a point whose label would overlap another's is named by its
# tooltip); and a Plotly title cut off by its figure's right edge or under its buttons (shown at all times on a touch screen).
OVERLAPPING_LABELS = """() => {
    """ + OVERLAP + """
    const overlaps = [];
    for (const figure of document.querySelectorAll(".js-plotly-plot, .attn-step-view")) {
        const name = figure.parentElement.id || figure.id;
        const boxes = [...figure.querySelectorAll(".xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .legend .traces, .attn-tick, .attn-point-label")]
            .filter((label) => label.style.display !== "none" && label.textContent.trim())
            .map((label) => [label.textContent, label.getBoundingClientRect()]);
        boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => { if (overlap(p, q)) overlaps.push(`${name}: ${a} / ${b}`); }));
        const edge = figure.querySelector(".main-svg")?.getBoundingClientRect().right;
        const modebar = figure.querySelector(".modebar");
        const buttons = modebar && getComputedStyle(modebar).opacity !== "0" ? modebar.getBoundingClientRect() : null;
        for (const title of figure.querySelectorAll(".gtitle, .gtitle-subtitle")) {
            const box = title.getBoundingClientRect();
            if (box.right > edge + 0.5) overlaps.push(`${name}: ${title.textContent} cut off`);
            if (buttons && overlap(box, buttons, 0)) overlaps.push(`${name}: ${title.textContent} under the buttons`);
        }
    }
    return overlaps;
}"""


def first_of_kind(shipped, attention: str) -> str | None:
    return next((model.key for model in shipped.models if model.translator.config.attention == attention), None)


def pick(page, side: str, key: str):
    page.locator(f"#{side}-model input").fill(key)
    page.get_by_role("option", name=key, exact=False).first.click()


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_the_baseline_beside_attention_on_a_long_sentence_then_dot_on_both_sides(shipped, browser, app_url, width, height):
    """One click puts the no-attention baseline beside an attention model on the long example: both
    translate, the baseline's grid slot says why it has none, its step view shows the one fixed c.
    Then the same dot-score model on both sides. No console error, no label on another."""
    baseline = first_of_kind(shipped, "none")
    if baseline is None:
        pytest.skip("no checkpoint without attention in checkpoints/")
    page = browser.new_page(viewport={"width": width, "height": height}, has_touch=width < 500)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    open_app(page, app_url)
    page.locator("#compare-long").click()
    page.wait_for_function(caption_shows("left", "the same c as at every other step"), timeout=60_000)
    page.wait_for_function(caption_shows("right", "most attention on"), timeout=60_000)
    page.locator("#right-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
    assert page.locator("#left-model input").input_value().endswith(baseline)
    assert page.locator("#left-text textarea").input_value() and page.locator("#right-text textarea").input_value()
    assert page.locator("#left-grid").is_hidden() and "No attention, so no grid" in page.locator("#left-grid-note").inner_text()
    assert page.locator("#left-step canvas").count() == 1 and page.locator("#left-step .attn-bars").count() == 0  # c, no α
    state = shipped.translate.translate(LONG_EXAMPLE, 1, False, "pieces", baseline, shipped.why_attention.pair[1]).state
    last = len(state["views"]["left"]["result"].target_tokens)
    stars = set()
    for t in (1, last // 2, last):
        page.evaluate(f"(t) => {GROUP}.show(t)", t)
        stars.add(page.locator("#left-step .attn-star").get_attribute("transform"))
        assert page.evaluate(OVERLAPPING_LABELS) == [], t
    assert len(stars) == 1  # the fixed c does not move
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    screenshot_part(page, "#section-translate", SCREENSHOT_DIR / f"baseline-beside-attention-{width}.png")

    dot = first_of_kind(shipped, "luong-dot")
    if dot is not None:
        pick(page, "left", dot)  # each pick translates the sentence on screen with that model
        page.wait_for_function(caption_shows("left", "most attention on"), timeout=60_000)
        pick(page, "right", dot)
        page.wait_for_function("() => document.querySelector('#right-heading').innerText.includes('Luong (dot)')",
                               timeout=60_000)
        page.wait_for_function(f"() => {GROUP}.payload?.views.every((view) => view.title.includes('dot'))", timeout=60_000)
        assert page.locator("#left-text textarea").input_value() == page.locator("#right-text textarea").input_value()
        assert page.evaluate(OVERLAPPING_LABELS) == []
        page.screenshot(path=str(SCREENSHOT_DIR / f"dot-both-sides-{width}.png"), full_page=False)
    assert errors == []
    page.close()


def test_the_grids_download_as_svg_with_the_models_numbers(shipped, browser, app_url):
    page = browser.new_page(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    open_app(page, app_url)
    for side in SIDES:
        page.locator(f"#{side}-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
    state = shipped.translate.translate(EXAMPLES[0], 1, False).state
    downloads = []
    page.on("download", lambda download: downloads.append(download))
    page.get_by_role("button", name="Download the grids (SVG)").click()
    for _ in range(100):  # both files, within 10 s
        if len(downloads) == 2:
            break
        page.wait_for_timeout(100)
    assert sorted(d.suggested_filename for d in downloads) == ["alignment-grid-left.svg", "alignment-grid-right.svg"]
    for download in downloads:
        svg = Path(download.path()).read_text()
        side = download.suggested_filename.removeprefix("alignment-grid-").removesuffix(".svg")
        assert svg.startswith("<svg") and state["views"][side]["result"].source_tokens[1] in svg  # labels drawn as text
    page.close()


def test_the_traces_download_with_the_step_data_of_the_translation_on_screen(shipped, browser, app_url):
    """The trace file comes in the step data's event (TranslateSection.steps_and_trace): after a new
    translation the button downloads that sentence's traces, both models'."""
    sentence = EXAMPLES[2]
    page = browser.new_page(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    open_app(page, app_url)
    page.get_by_role("textbox", name="English sentence").fill(sentence)
    page.get_by_role("button", name="Translate").click()
    page.wait_for_function(f"() => {GROUP}?.payload?.views[0].source.includes('▁sunset')", timeout=60_000)
    with page.expect_download(timeout=30_000) as download:
        page.get_by_role("button", name="Download the traces (JSON)").click()
    trace = json.loads(Path(download.value.path()).read_text())
    state = shipped.translate.translate(sentence, 1, False).state
    assert trace["source"] == sentence and list(trace["models"]) == [shipped.translate.models.picked(state, side).key for side in SIDES]
    page.close()


def test_a_translation_sends_the_requests_the_classroom_benchmark_times(browser, app_url):
    """bench_app's whole flow is the page's: translate through the queue, then AFTER_TRANSLATE, each outside
    it (one POST); a section that starts answering translations, or an event moved into the queue, fails here."""
    dependencies = {d["id"]: d["api_name"] for d in json.loads(urlopen(f"{app_url}config").read())["dependencies"]}
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    open_app(page, app_url)
    sent = []
    page.on("request", lambda request: sent.append((request.url.split("/gradio_api/")[1].split("?")[0],
                                                    dependencies[json.loads(request.post_data)["fn_index"]]))
            if request.method == "POST" and "/gradio_api/" in request.url else None)
    page.get_by_role("textbox", name="English sentence").fill(EXAMPLES[2])
    page.get_by_role("button", name="Translate").click()
    page.wait_for_function(f"() => {GROUP}?.payload?.views[0].source.includes('▁sunset')", timeout=60_000)
    page.wait_for_timeout(2_000)  # anything else the translation sets off
    assert sorted(sent) == sorted([("queue/join", "translate"), *(("run/predict", name) for name in AFTER_TRANSLATE)])
    page.close()



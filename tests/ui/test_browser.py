"""A real browser (Debian's Chromium, driven by Playwright) uses the running app as a student would: the translate
section and the page as a whole; the helpers the other browser tests import (test_browser_<section>.py)."""
import html
import json
import os
import shutil
from pathlib import Path
from urllib.request import urlopen

import numpy as np
import pytest
from axe_playwright_python.sync_playwright import Axe

import app
from attn_demo.ui import page as page_parts
from attn_demo.ui.translate import EXAMPLES, SIDES, STEPS
from attn_demo.ui.why_attention import LONG_EXAMPLE
from attn_demo.views.steps import EOS_NOTE, VECTOR_COLORSCALE, project
from attn_demo.views.translation import grid_figure
from benchmarks.bench_app import AFTER_TRANSLATE
from benchmarks.server import CHROMIUM, CHROMIUM_FLAGS
from conftest import ROOT, plotly_figure

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or CHROMIUM
SCREENSHOT_DIR = ROOT / "artifacts"
WHOLE_PARTS = os.environ.get("ATTN_DEMO_SCREENSHOTS") == "whole"  # screenshot_part: whole sections, not their first screen


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("ATTN_DEMO_REQUIRE_BROWSER"):
            pytest.fail(f"Chromium not found at {CHROMIUM}")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


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
# Dropdowns whose text can run under their arrow (Gradio draws it over the end of the box)
TEXT_UNDER_AN_ARROW = """() => [...document.querySelectorAll(".secondary-wrap")].filter((wrap) => wrap.offsetParent).flatMap((wrap) => {
    const input = wrap.querySelector("input"), arrow = wrap.querySelector(".icon-wrap")?.getBoundingClientRect();
    const end = input.getBoundingClientRect().right - parseFloat(getComputedStyle(input).paddingRight);
    return arrow && arrow.width && end > arrow.left + 0.5 ? [`${wrap.closest("[id]")?.id}: ${input.value}`] : [];
})"""
THIRTY_WORDS = ("When we finally arrived at the old station late last night, the last train to the city had already "
                "left, so we walked home together in the cold rain.")


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_no_label_overlaps_another_on_a_phone_or_a_wide_screen(shipped, browser, app_url, width, height):
    """The examples and a 30-word sentence, at steps 1, middle and last, pieces and words: every tick
    label readable, and the page no wider than the screen (wide grids scroll inside themselves)."""
    page = browser.new_page(viewport={"width": width, "height": height}, has_touch=width < 500)  # a phone has touch
    open_app(page, app_url)
    for sentence in [*EXAMPLES, THIRTY_WORDS]:
        page.get_by_role("textbox", name="English sentence").fill(sentence)
        page.get_by_role("button", name="Translate").click()
        views = shipped.translate.translate(sentence, 1, False).state["views"]  # the page's translation (cached)
        page.wait_for_function(f"(pieces) => JSON.stringify({GROUP}.payload?.views[1].source) === pieces && "
                               "JSON.stringify([...document.querySelectorAll('#right-grid .xtick text')].map((t) => t.textContent))"
                               " === pieces", arg=json.dumps(views["right"]["result"].source_tokens, ensure_ascii=False, separators=(",", ":")),
                               timeout=60_000)
        last = max(len(view["result"].target_tokens) for view in views.values())
        for t in (1, (last + 1) // 2, last):
            page.evaluate(f"(t) => {GROUP}.show(t)", t)
            assert page.evaluate(OVERLAPPING_LABELS) == [], (sentence, t)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert page.locator("#header h1").bounding_box()["width"] >= min(width - 80, 600)  # the title is not squeezed
    assert page.evaluate(TEXT_UNDER_AN_ARROW) == []  # a model's name ends in "…" before a picker's arrow
    page.locator("#grid-unit").get_by_label("words").check()
    page.wait_for_function("() => [...document.querySelectorAll('#right-grid .xtick text')].some((t) => t.textContent === 'rain.')",
                           timeout=30_000)
    assert page.evaluate(OVERLAPPING_LABELS) == []
    if width < 500:  # a tap on a bar names its number, as hovering does with a mouse
        best = int(views["right"]["result"].attention[-1].argmax())  # the page shows the right side's last step
        page.locator("#right-step .attn-bars").nth(1).locator(".attn-bar").nth(best).tap()
        tooltip = page.locator("#right-step .attn-tooltip")
        assert tooltip.is_visible() and tooltip.text_content().startswith("α = ")
    screenshot_part(page, "#section-translate", SCREENSHOT_DIR / f"thirty-words-{width}.png")
    page.close()


def test_dark_theme_shows_the_same_page(browser, app_url):
    page = browser.new_page(viewport={"width": 1400, "height": 900}, color_scheme="dark")
    open_app(page, app_url + "?__theme=dark")
    page.get_by_role("textbox", name="English sentence").fill("I don't like coffee.")
    page.get_by_role("textbox", name="English sentence").press("Enter")
    page.locator("#right-step .attn-step-view").wait_for(timeout=60_000)
    assert page.evaluate("() => document.body.classList.contains('dark') || document.documentElement.classList.contains('dark')")
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "app-dark.png"), full_page=False)
    page.close()


def test_quiz_checks_answers_about_attention_and_about_the_translation(shipped, browser, app_url):
    sentence = "I have never seen such a beautiful sunset."
    questions = shipped.quiz.questions_for(shipped.translate.translate(sentence, 1, False).state)
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a student's phone
    open_app(page, app_url)
    page.get_by_role("textbox", name="English sentence").fill(sentence)
    page.get_by_role("button", name="Translate").click()
    trace_question = len(shipped.quiz.concepts) + 1  # the first question about this translation
    page.locator(f"#quiz-{trace_question}").get_by_label(questions[trace_question - 1].choices[0]).wait_for(timeout=60_000)

    def choose(number, right):
        question = questions[number - 1]
        choice = question.answer if right else (question.answer + 1) % len(question.choices)
        page.locator(f"#quiz-{number}").get_by_label(question.choices[choice], exact=True).check()

    choose(1, right=True)
    choose(2, right=False)
    choose(trace_question, right=True)
    choose(trace_question + 1, right=False)
    page.get_by_role("button", name="Check my answers").click()
    page.wait_for_function("() => document.querySelector('#quiz-1-feedback').innerText.includes('Right')", timeout=30_000)
    feedback = lambda number: page.locator(f"#quiz-{number}-feedback").inner_text()
    assert "Not quite" in feedback(2) and "Right" in feedback(trace_question) and "Not quite" in feedback(trace_question + 1)
    assert feedback(3) == ""  # unanswered questions get no verdict
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.locator(f"#quiz-{trace_question}").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOT_DIR / "quiz-phone.png"), full_page=False)
    page.close()


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_alignment_check_draws_the_human_links_on_each_models_grid(shipped, browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    open_app(page, app_url)
    assert page.locator(".js-plotly-plot").count() == 2  # the opening grids only: the section draws its own when near
    page.locator(f"#{page_parts.section_id('alignment')}").scroll_into_view_if_needed()
    for side in SIDES:  # then the first example is drawn
        page.locator(f"#{side}-gold-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
    sentence = page.locator("#gold-sentence input")
    sentence.click()
    sentence.fill("22.")
    page.get_by_role("option", name="22. i disagree", exact=False).click()
    expected = shipped.alignment_check.show(22, False, *app.OPENING_PICKS)
    page.wait_for_function("() => document.querySelector('#right-gold-score').innerText.includes("
                           f"{expected[3].split('AER **')[1].split('**')[0]!r})", timeout=30_000)
    for side, grid in zip(SIDES, expected[::2]):
        drawn = json.loads(page.evaluate(
            "(side) => JSON.stringify(document.querySelector(`#${side}-gold-grid .js-plotly-plot`).layout.shapes)", side))
        assert len(drawn) == len(plotly_figure(grid).layout.shapes)  # every human link outlined
    page.locator("#right-gold-grid").scroll_into_view_if_needed()
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"alignment-check-{width}.png"), full_page=False)
    page.close()


def test_a_chart_further_down_is_drawn_when_near_in_the_room_kept_for_it(browser, app_url):
    """The BLEU-by-length chart is not drawn with the page; when the reader comes near its section it is,
    in the room its box kept: the button under it does not move (a finger about to tap it would miss)."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True)
    open_app(page, app_url)
    top = "(id) => Math.round(document.getElementById(id).getBoundingClientRect().top + window.scrollY)"
    assert page.locator("#length-chart .js-plotly-plot").count() == 0
    before = page.evaluate(top, "compare-long")
    page.locator(f"#{page_parts.section_id('why')}").scroll_into_view_if_needed()
    page.locator("#length-chart .js-plotly-plot .scatterlayer").wait_for(timeout=60_000)
    page.wait_for_timeout(300)  # one more frame of layout
    assert page.evaluate(top, "compare-long") == before
    page.close()


def test_a_chart_a_screen_below_its_sections_top_is_drawn_when_a_reader_jumps_to_it(browser, app_url):
    """On a phone the comparison's explanation and table stand more than a screen tall above its chart: a reader
    who goes straight from the BLEU-by-length chart to it sees it drawn at once, not an empty frame."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True)
    open_app(page, app_url)
    page.evaluate("() => document.getElementById('length-chart').scrollIntoView()")
    page.locator("#length-chart .js-plotly-plot .scatterlayer").wait_for(timeout=60_000)
    page.evaluate("() => document.getElementById('compare-chart').scrollIntoView()")
    section_top = page.evaluate(f"() => document.getElementById({page_parts.section_id('compare')!r}).getBoundingClientRect().top")
    assert section_top < -844, "the section's top is no longer a screen above its chart: this test no longer jumps past it"
    page.locator("#compare-chart .js-plotly-plot .barlayer").wait_for(timeout=5_000)
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "compare-chart-jumped-to-390.png"))
    page.close()


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


# Every table cell on the page whose text is one number, and how many lines the browser drew it on.
NUMBER_CELL_LINES = """() => [...document.querySelectorAll('.prose td')].filter((td) => /^[-0-9.,]+$/.test(td.innerText.trim()))
    .map((td) => { const range = document.createRange(); range.selectNodeContents(td);
                   return [td.innerText.trim(), new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size]; })"""


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_tables_keep_every_number_on_one_line_and_scroll_sideways_on_a_phone(browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(app_url, wait_until="load")
    table = page.locator("#compare-table table")
    table.wait_for(timeout=60_000)
    cells = page.evaluate(NUMBER_CELL_LINES)
    assert len(cells) > 10 and [cell for cell in cells if cell[1] != 1] == []  # "5,532,832", not "5,532,8" over "32"
    scrolls = page.evaluate("(t) => t.scrollWidth > t.clientWidth", table.element_handle())
    assert scrolls == (width < 800)  # on a projector the whole table is in view
    table.scroll_into_view_if_needed()
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    table.screenshot(path=str(SCREENSHOT_DIR / f"compare-{width}.png"))
    page.close()


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_the_page_opens_on_a_translated_example(shipped, browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height}, has_touch=width < 500)  # a phone has touch
    page.goto(app_url, wait_until="load")
    for side in SIDES:  # nothing typed, nothing clicked
        page.wait_for_function(caption_shows(side, "Step 1 of"), timeout=60_000)
        page.locator(f"#{side}-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
    state = shipped.translate.translate(EXAMPLES[0], 1, False).state
    assert page.locator("#left-text textarea").input_value() == state["views"]["left"]["result"].text
    assert page.get_by_role("textbox", name="English sentence").input_value() == EXAMPLES[0]
    assert page.evaluate(EMPTY_FRAMES) == []  # a section not yet asked for says what to press instead
    assert page.evaluate(UNREACHABLE_FIGURES) == []  # a grid wider than a phone scrolls sideways in its own box
    for chart, section in (("length-chart", "why"), ("compare-chart", "compare")):  # drawn once the reader comes near
        page.locator(f"#{page_parts.section_id(section)}").scroll_into_view_if_needed()
        page.locator(f"#{chart} .js-plotly-plot .scatterlayer, #{chart} .js-plotly-plot .barlayer").first.wait_for(timeout=60_000)
    assert page.evaluate(CLIPPED_TICKS) == []  # every tick label of every drawn figure whole, the BLEU chart's too
    assert page.evaluate(OVERLAPPING_LABELS) == []  # nor a legend on an axis title, nor a title cut off, on a phone too
    assert serious_violations(page) == []  # contrast on a projector, a keyboard for what scrolls
    texts = page.evaluate(FIGURE_TEXTS)  # every figure drawn is read in words: the grids where each French piece looks most
    assert {"left-grid", "right-grid", "length-chart", "compare-chart"} <= texts.keys() and all(
        role == "figure" and label for role, label in texts.values()), texts
    for side, (model, view) in zip(SIDES, shipped.translate.models.sides(state)):
        assert texts[f"{side}-grid"][1] == html.unescape(grid_figure(model, view, False)["layout"]["meta"]["text"])
    for side in SIDES:  # under each grid, every English piece's coverage, on the page as the server wrote it
        result = state["views"][side]["result"]
        cells = page.locator(f"#{side}-coverage .coverage-cell .coverage-value").all_inner_texts()
        assert cells == [f"{c:.2f}" for c in result.coverage], side
    for side in SIDES:  # a first step whose attention rests on </s> says what is known about it, and only such a step
        alpha = state["views"][side]["result"].attention
        resting = alpha is not None and alpha[0].argmax() == alpha.shape[1] - 1
        assert (EOS_NOTE in caption(page, side)) == resting, side
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"first-view-{width}.png"), full_page=False)
    page.close()


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_every_section_is_one_click_from_the_contents_bar_which_stays_on_screen(browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    open_app(page, app_url)
    for key, name in reversed(page_parts.CONTENTS):  # from the bottom up: each jump goes somewhere else
        page.locator("#contents").get_by_role("link", name=name, exact=True).click()
        page.wait_for_function(f"() => Math.abs(document.querySelector('#section-{key}').getBoundingClientRect().top - "
                               "document.querySelector('#contents').getBoundingClientRect().bottom) < 16", timeout=10_000)
        assert page.evaluate("() => document.querySelector('#contents').getBoundingClientRect().top") == 0  # still on top
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")  # the bar scrolls in itself
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



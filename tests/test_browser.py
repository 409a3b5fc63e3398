"""A real browser (Debian's Chromium, driven by Playwright) uses the running app as a student would."""
import json
import os
import shutil
from pathlib import Path

import pytest

import app
from attn_demo.figures import merge_step
from conftest import ROOT, assert_same_figure, untyped

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
SCREENSHOT_DIR = ROOT / "artifacts"


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("ATTN_DEMO_REQUIRE_BROWSER"):
            pytest.fail(f"Chromium not found at {CHROMIUM}")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


def caption(page, model) -> str:
    return page.locator(f"#{model}-caption").inner_text()


# The step figure on the page, its typed arrays as plain arrays (plotly.js may have decoded them).
DRAWN_FIGURE = """(model) => {
    const gd = document.querySelector(`#${model}-step .js-plotly-plot`);
    const plain = (key, value) => ArrayBuffer.isView(value) ? Array.from(value) : value;
    return JSON.stringify({data: gd.data, title: gd.layout.title.text}, plain);
}"""


def assert_page_draws_the_servers_step(page, sentence, t):
    """Step t on the page has the numbers the server's figure code gives for it (figures.merge_step,
    which tests/test_figures.py checks against step_figure): the browser's merge adds nothing of its own."""
    payload = untyped(json.loads(json.dumps(app.TRANSLATE.step_data(app.TRANSLATE.translate(sentence, 1, False)[0], False))))
    for model in ("bahdanau", "luong"):
        expected = merge_step(payload[model]["template"], payload[model]["steps"][t - 1], payload[model]["annotations"])
        drawn = untyped(json.loads(page.evaluate(DRAWN_FIGURE, model)))
        assert drawn["title"] == expected["layout"]["title"]["text"]
        for drawn_trace, trace in zip(drawn["data"], expected["data"], strict=True):
            assert_same_figure({key: drawn_trace[key] for key in trace}, trace)


def test_translate_scrub_and_refuse_markup_in_a_real_browser(browser, app_url):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(app_url)
    page.get_by_role("textbox", name="English sentence").fill("The red car is in front of the house.")
    page.get_by_role("button", name="Translate").click()
    for model in ("bahdanau", "luong"):
        page.wait_for_function(f"() => document.querySelector('#{model}-text textarea').value.length > 0", timeout=60_000)
        page.locator(f"#{model}-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
        page.locator(f"#{model}-step .js-plotly-plot").wait_for(timeout=60_000)
        assert "Step 1 of" in caption(page, model)
    first_bars = page.locator("#luong-step .js-plotly-plot").inner_html()
    calls = []  # events sent to the server (each joins its queue)
    page.on("request", lambda request: calls.append(request.url) if "/queue/join" in request.url else None)
    page.get_by_role("button", name="Next step ▶").click()
    page.wait_for_function("() => document.querySelector('#luong-caption').innerText.includes('Step 2 of')", timeout=30_000)
    page.wait_for_function(f"() => document.querySelector('#luong-step .js-plotly-plot').innerHTML !== {first_bars!r}",
                           timeout=30_000)
    assert "Step 2 of" in caption(page, "bahdanau")
    page.locator("#step-slider input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#bahdanau-caption').innerText.includes('Step 3 of')", timeout=30_000)
    assert calls == []  # scrubbing is drawn in the browser: nothing asked of the server
    assert_page_draws_the_servers_step(page, "The red car is in front of the house.", 3)

    page.get_by_role("button", name="▶ Play").click()  # about one step a second, then stop
    page.wait_for_function("() => document.querySelector('#bahdanau-caption').innerText.includes('Step 5 of')", timeout=10_000)
    page.get_by_role("button", name="⏸ Stop").click()
    slider = page.locator("#step-slider input[type=range]")
    stopped_at = slider.input_value()
    page.wait_for_timeout(2500)
    assert slider.input_value() == stopped_at and page.get_by_role("button", name="▶ Play").is_visible()
    assert calls == []  # playing is scrubbing too
    assert_page_draws_the_servers_step(page, "The red car is in front of the house.", int(stopped_at))
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "app.png"), full_page=True)

    page.locator("#grid-unit").get_by_label("words").check()  # the grids by word: "house." is one column
    page.wait_for_function("() => [...document.querySelectorAll('#luong-grid .xtick text')].some((t) => t.textContent === 'house.')",
                           timeout=30_000)
    page.locator("#grid-unit").get_by_label("pieces").check()

    page.get_by_label("Large text (projector)").check()
    page.wait_for_function("() => document.body.classList.contains('attn-large')", timeout=10_000)
    page.wait_for_function("() => document.querySelector('#luong-grid .js-plotly-plot .ytick text').style.fontSize === '20px'",
                           timeout=30_000)
    page.screenshot(path=str(SCREENSHOT_DIR / "app-large-text.png"), full_page=True)
    page.get_by_label("Large text (projector)").uncheck()

    page.get_by_role("textbox", name="English sentence").fill("<img src=x onerror=alert(1)>")
    page.get_by_role("textbox", name="English sentence").press("Enter")
    page.wait_for_function("() => document.querySelector('#status').innerText.includes('never seen')", timeout=30_000)
    page.wait_for_timeout(1000)
    assert "'<'" in page.locator("#status").inner_text()  # the markup's characters are shown as text
    assert page.locator("img[src='x']").count() == 0
    assert dialogs == []
    page.screenshot(path=str(SCREENSHOT_DIR / "app-bad-input.png"), full_page=False)
    page.close()


def test_dark_theme_shows_the_same_page(browser, app_url):
    page = browser.new_page(viewport={"width": 1400, "height": 900}, color_scheme="dark")
    page.goto(app_url + "?__theme=dark")
    page.get_by_role("textbox", name="English sentence").fill("I don't like coffee.")
    page.get_by_role("textbox", name="English sentence").press("Enter")
    page.locator("#luong-step .js-plotly-plot").wait_for(timeout=60_000)
    assert page.evaluate("() => document.body.classList.contains('dark') || document.documentElement.classList.contains('dark')")
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "app-dark.png"), full_page=False)
    page.close()


def test_quiz_checks_answers_about_attention_and_about_the_translation(browser, app_url):
    sentence = "I have never seen such a beautiful sunset."
    questions = app.QUIZ.questions_for(app.TRANSLATE.translate(sentence, 1, False)[0])
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a student's phone
    page.goto(app_url)
    page.get_by_role("textbox", name="English sentence").fill(sentence)
    page.get_by_role("button", name="Translate").click()
    trace_question = len(app.QUIZ.concepts) + 1  # the first question about this translation
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
def test_alignment_check_draws_the_human_links_on_each_models_grid(browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(app_url)
    for model in ("bahdanau", "luong"):  # the first example is on the page from the start
        page.locator(f"#{model}-gold-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
    sentence = page.locator("#gold-sentence input")
    sentence.click()
    sentence.fill("22.")
    page.get_by_role("option", name="22. i disagree", exact=False).click()
    expected = app.ALIGNMENT_CHECK.show(22, False)
    page.wait_for_function("() => document.querySelector('#luong-gold-score').innerText.includes("
                           f"{expected[3].split('AER **')[1].split('**')[0]!r})", timeout=30_000)
    for model, figure in (("bahdanau", expected[0]), ("luong", expected[2])):
        drawn = json.loads(page.evaluate(
            "(model) => JSON.stringify(document.querySelector(`#${model}-gold-grid .js-plotly-plot`).layout.shapes)", model))
        assert len(drawn) == len(figure.layout.shapes)  # every human link outlined
    page.locator("#luong-gold-grid").scroll_into_view_if_needed()
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"alignment-check-{width}.png"), full_page=False)
    page.close()

"""Explore the decoding in a real browser: the beam laid open, a piece changed, the attention moved."""
import dataclasses
import json

import pytest

import app
from attn_demo.ui import explore
from attn_demo.ui.translate import EXAMPLES
from test_browser import (
    DRAWN_STEP, FIGURE_TEXTS, OVERLAPPING_LABELS, SCREENSHOT_DIR, caption, caption_shows, open_app,
    strip_markdown)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_explore_the_beam_change_a_word_and_move_the_attention(shipped, browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    open_app(page, app_url)  # the opening example, translated
    page.get_by_role("button", name="Show the beam").click()
    page.locator("#explore-search .js-plotly-plot .scatterlayer").wait_for(timeout=60_000)
    page.locator("#explore-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)  # hypothesis 1, picked
    page.locator("#explore-hypothesis-step .attn-step-view").wait_for(timeout=60_000)  # and its step view
    model = shipped.translate.models[app.OPENING_PICKS[0]].translator
    best = model.translate(EXAMPLES[0], beam_size=5, n_best=5)
    assert best[0].text in page.locator("#explore-table").inner_text()
    page.get_by_role("button", name="The model's choices at this step").click()
    page.locator("#explore-piece label").nth(1).wait_for(timeout=30_000)
    page.locator("#explore-piece label").nth(1).click()  # the second most probable piece at step 2
    page.get_by_role("button", name="Change the piece and go on").click()
    page.wait_for_function("() => document.querySelector('#explore-result').innerText.includes('What if step 2')", timeout=30_000)
    page.get_by_role("button", name="Move the attention and go on").click()
    page.wait_for_function("() => document.querySelector('#explore-result').innerText.includes('What if α at step 2')",
                           timeout=30_000)
    page.locator("#explore-result-grid .js-plotly-plot .heatmaplayer").wait_for(timeout=30_000)
    assert "log p" in page.locator("#explore-result").inner_text()
    texts = page.evaluate(FIGURE_TEXTS)  # the beam and both grids are read in words too
    assert "The best, as pieces: #1 " in texts["explore-search"][1] and "attends to most" in texts["explore-result-grid"][1]
    page.wait_for_function(caption_shows("explore-what-if", "Step 1 of"), timeout=30_000)
    page.locator("#explore-steps").get_by_role("button", name="Next step ▶").click()  # the explorer's own scrubber
    page.wait_for_function(caption_shows("explore-what-if", "Step 2 of"), timeout=30_000)
    assert "Step 2 of" in caption(page, "explore-hypothesis") and "Step 1 of" in caption(page, "left")
    for view in ("explore-hypothesis", "explore-what-if"):  # each with its network view, at the explorer's step
        assert page.locator(f"#{view}-network svg[role=img]").get_attribute("aria-label").startswith("Step 2:")
    moved = json.loads(page.evaluate(DRAWN_STEP, "explore-what-if"))  # α of step 2 all on the first English piece
    assert moved["weights"] == [1.0] + [0.0] * (len(moved["weights"]) - 1) and "α set by hand" in moved["caption"]
    page.locator("#explore-steps").get_by_role("button", name="Next step ▶").click()
    page.wait_for_function(caption_shows("explore-what-if", "Step 3 of"), timeout=30_000)
    assert "set by hand" not in caption(page, "explore-what-if")  # step 3's α is the model's own again
    assert page.evaluate(OVERLAPPING_LABELS) == []
    page.locator("#explore-repeat input[type=number]").fill("1")  # β_rep 1, ranking every beginning
    page.locator("#explore-repeat input[type=number]").press("Enter")
    page.get_by_label("At every step").check()
    page.get_by_role("button", name="Show the beam").click()
    page.wait_for_function("() => document.querySelector('#explore-search .ytitle')?.textContent.includes('coverage term')",
                           timeout=60_000)
    stepwise = model.translate(EXAMPLES[0], beam_size=5, n_best=5, penalties=dataclasses.replace(
        model.penalties, repeat=1.0, stepwise=True))
    table = page.locator("#explore-table").inner_text()
    assert stepwise[0].text in table and f"{stepwise[0].score:.3f}" in table
    page.locator("#explore-search").scroll_into_view_if_needed()
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"explore-{width}.png"), full_page=False)
    page.locator("#explore-steps").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOT_DIR / f"explore-steps-{width}.png"), full_page=False)
    page.get_by_role("textbox", name="English sentence").fill("I don't like coffee.")
    page.get_by_role("button", name="Translate").click()  # another sentence: the old one's beam and what-if go
    page.wait_for_function(f"() => document.querySelector('#explore-table').innerText.trim() === {strip_markdown(explore.NOT_SHOWN)!r}",
                           timeout=60_000)
    for gone in ("#explore-search .js-plotly-plot", "#explore-hypothesis-step .attn-step-view",
                 "#explore-what-if-step .attn-step-view", "#explore-hypothesis-network svg", "#explore-what-if-network svg",
                 "#explore-result-grid .js-plotly-plot"):
        page.locator(gone).wait_for(state="detached", timeout=30_000)
    assert page.locator("#explore-result").inner_text().strip() == ""
    assert page.locator("#explore-rank label").count() == 0
    page.close()

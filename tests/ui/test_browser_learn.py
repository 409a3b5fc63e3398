"""Watch it learn in a real browser: both models through their recorded training."""
import numpy as np
import pytest

from attn_demo.ui import learn
from attn_demo.ui.why_attention import LONG_EXAMPLE
from test_browser import SCREENSHOT_DIR

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_watch_it_learn_moves_both_models_through_their_recorded_training(shipped, browser, app_url, width, height):
    """The opening models' timelines of the long example: the slider redraws each side's translation,
    grid and chart marker at that point from what the run recorded, and the page stays phone-wide."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(app_url + "#section-learn", wait_until="load")
    page.locator("#learn-view .attn-learn-side").first.wait_for(timeout=60_000)
    page.get_by_label("Sentence", exact=True).click()
    page.get_by_role("option", name=LONG_EXAMPLE).click()
    index = learn.PROBES.index(LONG_EXAMPLE)
    sides = [learn.side(shipped.learn.models[key], index) for key in shipped.learn.opening]
    assert all(side["points"] for side in sides), "the opening models ship a timeline"
    page.wait_for_function("(source) => window.attnLearn.view('learn-view').payload?.sides[0].points[0].source === source",
                           arg=LONG_EXAMPLE, timeout=60_000)
    positions = sorted({p["target_pieces"] for side in sides for p in side["points"]})
    slider = page.locator("#learn-view-slider input[type=range]")
    for i in (1, len(positions) // 2, len(positions)):
        slider.focus()
        page.keyboard.press("Home")
        for _ in range(i - 1):
            page.keyboard.press("ArrowRight")
        page.wait_for_function("(n) => window.attnLearn.view('learn-view').index === n", arg=i, timeout=10_000)
        for k, side in enumerate(sides):
            shown = [p for p in side["points"] if p["target_pieces"] <= positions[i - 1]][-1]
            view = page.locator("#learn-view .attn-learn-side").nth(k)
            assert view.locator(".attn-learn-translation").text_content() == (shown["translation"] or "(nothing)")
            assert f"After {shown['target_pieces']:,} target pieces" in view.locator(".attn-learn-status").text_content()
            if shown["alpha"] is not None:  # one pixel a weight: the grid is the recorded α's shape
                assert view.locator("canvas").evaluate("(c) => [c.height, c.width]") == list(np.array(shown["alpha"]).shape)
                assert view.locator(".attn-learn-rows span").count() == len(shown["french_pieces"])
                alpha = np.array(shown["alpha"])  # read in words: where each French piece looks most
                first = f"{shown['french_pieces'][0]} ← {shown['english_pieces'][alpha[0].argmax()]} (α {alpha[0].max():.2f})"
                assert f"attends to most: {first}" in view.locator("canvas").get_attribute("aria-label")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # a wide grid scrolls in its own box
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.locator("#section-learn").screenshot(path=str(SCREENSHOT_DIR / f"watch-it-learn-{width}.png"))
    page.close()

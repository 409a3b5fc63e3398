"""Is attention an explanation? in a real browser: attribution beside α, on demand."""
import numpy as np
import pytest

from attn_demo.ui import attribution
from attn_demo.ui.translate import EXAMPLES, SIDES
from conftest import untyped
from test_browser import (
    BAR_VALUES, EMPTY_FRAMES, OVERLAPPING_LABELS, SCREENSHOT_DIR, open_app, strip_markdown)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_attribution_beside_alpha_on_demand(shipped, browser, app_url, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    open_app(page, app_url)  # the opening example, translated
    page.locator("#attribution-method").get_by_label("input × gradient").check()
    page.get_by_role("button", name="What did each model rely on?").click()
    for side in SIDES:
        page.locator(f"#{side}-attribution .js-plotly-plot .heatmaplayer").wait_for(timeout=60_000)
    state = shipped.translate.translate(EXAMPLES[0], 1, False).state
    *expected, bars = shipped.attribution.show(state, "input-x-gradient", False, "pieces")
    for side, note in zip(SIDES, expected[1::2]):
        assert page.locator(f"#{side}-agreement").inner_text().split("Spearman ρ of ")[1][:4] == note.split("**")[3][:4]
    for side, sent in zip(SIDES, bars):  # and in each step view, under the α bars: e, α, then A at step 1
        page.wait_for_function(f"() => document.querySelectorAll('#{side}-step .attn-bars').length === 4", timeout=30_000)
        drawn = page.evaluate(BAR_VALUES, side)
        np.testing.assert_array_equal(np.float32(drawn[3]), untyped(sent["scores"])[0])
    assert page.evaluate(OVERLAPPING_LABELS) == []
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.locator("#left-attribution").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOT_DIR / f"attribution-{width}.png"), full_page=False)
    page.locator("#left-step .attn-bars").nth(3).scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOT_DIR / f"attribution-steps-{width}.png"), full_page=False)
    page.locator("#attribution-method").get_by_label("integrated gradients").check()  # not asked for: not drawn
    page.locator("#grid-unit").get_by_label("words").check()  # the attribution grids follow, with their method
    for side in SIDES:
        page.wait_for_function(f"() => document.querySelector('#{side}-attribution .gtitle')?.textContent"
                               ".endsWith('input × gradient by word')", timeout=30_000)
    page.locator("#grid-unit").get_by_label("pieces").check()
    page.get_by_role("textbox", name="English sentence").fill("I don't like coffee.")
    page.get_by_role("button", name="Translate").click()  # another sentence: its step views have no attribution yet
    page.wait_for_function("() => document.querySelectorAll('#left-step .attn-bars').length === 3", timeout=60_000)
    for side in SIDES:  # nor do its grids: the last sentence's are gone
        page.locator(f"#{side}-attribution .js-plotly-plot").wait_for(state="detached", timeout=30_000)
        assert page.locator(f"#{side}-agreement").inner_text().strip() == strip_markdown(attribution.NOT_SHOWN)
    assert page.evaluate(EMPTY_FRAMES) == []  # no empty plot drawn in place of the grids: the instruction is
    page.close()

"""The alignment check in a real browser, on a wide screen and a phone: the human links drawn on each model's grid."""
import json

import pytest

import app
from attn_demo.ui import page as page_parts
from attn_demo.ui.translate import SIDES
from conftest import plotly_figure
from test_browser import SCREENSHOT_DIR, open_app

pytestmark = pytest.mark.browser


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


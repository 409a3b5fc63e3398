"""Train it live in a real browser: a projector shares its lesson, a phone opens the link, both press Train and watch
one run."""
import time

import pytest

from test_browser import SCREENSHOT_DIR, serious_violations

pytestmark = pytest.mark.browser
SEED = 41  # this test's own lesson, new on the app


def set_number(page, elem_id: str, value):
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def test_a_projector_shares_a_lesson_a_phone_opens_it_and_both_watch_one_run_a_typed_input_steps_through(browser,
                                                                                                            app_url):
    projector = browser.new_page(viewport={"width": 1440, "height": 900})
    projector.goto(app_url + "#section-train", wait_until="load")
    projector.locator("#train-start").wait_for(timeout=60_000)
    set_number(projector, "train-seed", SEED)
    set_number(projector, "train-seconds", 5)
    projector.locator("#train-share").click()
    projector.locator("#train-share-qr svg.segno").wait_for(timeout=60_000)
    url = projector.locator("#train-share-link textarea").input_value()
    assert url.startswith(app_url) and f"seed={SEED}" in url and "seconds=5" in url and url.endswith("#section-train")
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    projector.locator("#train-share").scroll_into_view_if_needed()
    projector.screenshot(path=str(SCREENSHOT_DIR / "train-live-share-1440.png"), full_page=False)

    phone = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True)  # a student opens the link
    phone.goto(url, wait_until="load")
    phone.locator("#train-status").filter(has_text="A shared lesson").wait_for(timeout=60_000)
    assert phone.locator("#train-seed input").input_value() == str(SEED)
    assert phone.locator("#train-seconds input[type=number]").input_value() == "5"
    pages = [projector, phone]
    status = [page.locator("#train-status") for page in pages]
    pressed = time.perf_counter()
    projector.locator("#train-start").click()
    status[0].filter(has_text="updates").wait_for(timeout=30_000)
    print(f"first frame {time.perf_counter() - pressed:.2f} s after Train")  # BENCHMARKS times it under load
    phone.locator("#train-start").click()  # the link's settings: the phone joins the projector's lesson
    for page in pages:
        page.wait_for_function("() => document.querySelector('#train-status').innerText.startsWith('Trained')",
                               timeout=120_000)
    assert status[0].inner_text() == status[1].inner_text()  # one run: the same updates, the same figures
    assert "No attention (baseline)" in status[0].inner_text()
    for page in pages:
        for plot in ("train-loss", "train-accuracy", "train-grid"):
            page.locator(f"#{plot} .js-plotly-plot").wait_for(timeout=30_000)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= page.viewport_size["width"]
        assert serious_violations(page, "#section-train") == []

    phone.locator("#train-input textarea").fill("12345")
    phone.locator("#train-run").click()
    phone.locator("#train-attention-step .attn-step-view").wait_for(timeout=30_000)
    phone.locator("#train-baseline-step .attn-step-view").wait_for(timeout=30_000)
    assert "Exactly right: 54321" in phone.locator("#train-said").inner_text()
    assert phone.locator("#train-attention-step .attn-bars").count() > 0  # α drawn; the baseline's one c, no α
    assert phone.locator("#train-baseline-step .attn-bars").count() == 0
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    for page in pages:
        page.locator("#train-grid").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOT_DIR / f"train-live-{page.viewport_size['width']}.png"), full_page=False)
        page.close()

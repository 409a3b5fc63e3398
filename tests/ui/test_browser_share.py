"""Share and export in a real browser: a link opens the same view, its QR code decodes to it, a hostile link
stays text, and the exported page opens offline with the same numbers."""
import io
import json

import pytest

from attn_demo.ui.translate import EXAMPLES, SIDES
from test_browser import (
    GROUP, SCREENSHOT_DIR, assert_page_draws_the_models_step, caption_shows, first_of_kind, open_app,
    pick)

pytestmark = pytest.mark.browser


def test_a_shared_link_opens_the_same_view_and_its_qr_code_decodes_to_it(shipped, browser, app_url):
    zxingcpp = pytest.importorskip("zxingcpp")
    from PIL import Image

    sentence = "The cat sleeps on the sofa."
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(app_url + "?q=The%20cat%20sleeps%20on%20the%20sofa.", wait_until="load")
    state = shipped.translate.translate(sentence, 1, False).state
    page.wait_for_function(caption_shows("left", "Step 1 of"), timeout=60_000)
    page.wait_for_function(f"() => {GROUP}.payload?.views[0].source.includes('▁sofa')", timeout=60_000)
    for side in SIDES:  # translated by both models
        page.wait_for_function(f"(text) => document.querySelector('#{side}-text textarea').value === text",
                               arg=state["views"][side]["result"].text, timeout=60_000)
    other = first_of_kind(shipped, "none") or first_of_kind(shipped, "luong-general")
    pick(page, "left", other)
    page.wait_for_function(f"(key) => {GROUP}.payload?.views[0].title === {json.dumps(shipped.translate.models[other].title)}",
                           arg=other, timeout=60_000)
    page.locator("#grid-unit").get_by_label("words").check()
    page.locator("#translate-steps-slider input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(caption_shows("right", "Step 3 of"), timeout=60_000)
    page.get_by_role("button", name="Share this view: link and QR code").click()
    page.locator("#share-qr svg.segno").wait_for(timeout=60_000)
    url = page.locator("#share-link textarea").input_value()
    assert url.startswith(app_url) and "step=3" in url and "unit=words" in url and f"left={other}" in url
    assert page.locator("#share-note").inner_text().startswith("The app listens on this computer only")  # 127.0.0.1 here
    scanned = zxingcpp.read_barcodes(Image.open(io.BytesIO(page.locator("#share-qr svg.segno").screenshot())))
    assert [code.text for code in scanned] == [url]  # what a phone at the back of the room reads
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "share-1440.png"), full_page=False)

    page.locator("#share-section input").fill("Quiz")  # the teacher's link opens the class on the quiz
    page.get_by_role("option", name="Quiz", exact=True).click()
    page.get_by_role("button", name="Share this view: link and QR code").click()
    page.wait_for_function("() => document.querySelector('#share-link textarea').value.endsWith('#section-quiz')", timeout=60_000)
    url = page.locator("#share-link textarea").input_value()

    phone = browser.new_page(viewport={"width": 390, "height": 844})  # a student opens the link
    phone.goto(url, wait_until="load")
    phone.wait_for_function(caption_shows("left", "Step 3 of"), timeout=60_000)
    phone.wait_for_function("() => Math.abs(document.querySelector('#section-quiz').getBoundingClientRect().top - "
                            "document.querySelector('#contents').getBoundingClientRect().bottom) < 16", timeout=30_000)
    assert phone.locator("#left-model input").input_value().endswith(other)
    assert phone.locator("#explore-model input").input_value() == phone.locator("#left-model input").input_value()
    assert phone.locator("#grid-unit").get_by_label("words").is_checked()
    assert phone.get_by_role("textbox", name="English sentence").input_value() == sentence
    phone.close()
    page.close()


def test_a_hostile_link_stays_text_and_is_named(browser, app_url):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(app_url + "?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E&left=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&beam=99",
              wait_until="load")
    page.wait_for_function("() => document.querySelector('#status')?.innerText.includes(\"link's left model\")", timeout=60_000)
    status = page.locator("#status").inner_text()
    assert "<img src=x onerror=alert(1)>" in status and "link's beam" in status  # named, as text
    assert page.get_by_role("textbox", name="English sentence").input_value() == "<script>alert(1)</script>"
    page.wait_for_timeout(1000)
    assert page.locator("img[src='x']").count() == 0 and dialogs == []
    page.close()


def test_the_exported_html_opens_offline_and_shows_the_same_numbers(shipped, browser, app_url, tmp_path):
    sentence, k = EXAMPLES[2], 3
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    open_app(page, app_url)
    page.get_by_role("textbox", name="English sentence").fill(sentence)
    page.get_by_role("button", name="Translate").click()
    page.wait_for_function(f"() => {GROUP}?.payload?.views[0].source.includes('▁sunset')", timeout=60_000)
    page.get_by_role("button", name="Export this translation as one interactive HTML file (works offline)").click()
    page.locator("#export-file a").first.wait_for(timeout=60_000)  # the page offers the file
    page.close()

    path = shipped.export.export(shipped.translate.translate(sentence, 1, False).state)["value"]  # the file the page offered
    offline = browser.new_page(viewport={"width": 1440, "height": 900})
    requests = []
    offline.route("**/*", lambda route: (requests.append(route.request.url), route.abort())
                  if not route.request.url.startswith("file:") else route.continue_())
    errors = []
    offline.on("pageerror", lambda error: errors.append(str(error)))
    offline.goto(f"file://{path}", wait_until="load")
    offline.locator("#left-grid .heatmaplayer").wait_for(timeout=30_000)
    offline.wait_for_function(caption_shows("left", "Step 1 of"), timeout=30_000)
    for _ in range(k - 1):
        offline.get_by_role("button", name="Next step ▶").click()
    offline.wait_for_function(caption_shows("right", f"Step {k} of"), timeout=30_000)
    assert_page_draws_the_models_step(shipped, offline, sentence, k)  # the model's α, c_t, … at step k, as on the page
    for side in SIDES:  # and the network views, from the same payload; the grids are read in words as on the page
        assert offline.locator(f"#{side}-network svg[role=img]").get_attribute("aria-label").startswith(f"Step {k}:")
        offline.wait_for_function(f"() => document.querySelector('#{side}-grid').getAttribute('aria-label')?.includes('attends to most')",
                                  timeout=10_000)
    assert requests == [] and errors == []
    offline.screenshot(path=str(SCREENSHOT_DIR / "export-offline.png"), full_page=False)
    offline.close()

"""The student's page of a room in a real browser, as a phone in a lecture hall opens it: the pieces to tap at once,
the votes, the reveal and the summary as the teacher moves the room on, a lost connection said and recovered."""
import pytest

import app
from attn_demo.ui.classroom import OFFLINE, VOTE_RETRIES_S
from test_browser import SCREENSHOT_DIR, serious_violations
from test_browser_classroom import PHONE, vote_calls_dropped

pytestmark = pytest.mark.browser
PIECES = "#student-pieces button"
# every layout shift of the page so far (PerformanceObserver's buffered "layout-shift" entries), summed
LAYOUT_SHIFT = """() => new Promise((done) => new PerformanceObserver((list, observer) => {
  observer.disconnect(); done(list.getEntries().reduce((sum, e) => sum + e.value, 0));
}).observe({ type: "layout-shift", buffered: true }) || setTimeout(() => done(0), 500))"""


@pytest.fixture
def opened(teacher, shipped):
    """A room opened by the teacher's client on a sentence, and the translation the phones guess at."""
    sentence = "The red car."
    code, key = teacher.predict(sentence, app.OPENING_PICKS[0], api_name="/class_open")
    return code, key, shipped.translate.models[app.OPENING_PICKS[0]].translator.translate(sentence)


def join(browser, url: str, viewport=PHONE, profile: str = "visitor"):
    phone = browser.new_page(viewport=viewport, has_touch=True, is_mobile=True, profile=profile)
    phone.goto(url, wait_until="load")
    phone.locator(PIECES).first.wait_for(timeout=20_000)
    return phone


def test_two_phones_play_a_room_on_the_student_page_from_vote_to_summary(browser, app_url, teacher, opened):
    code, key, result = opened
    phones = [join(browser, f"{app_url}join/{code}", profile=f"phone {k}") for k in range(2)]  # two voters
    buttons = phones[0].locator(PIECES)
    assert buttons.all_inner_texts() == result.source_tokens
    assert all(buttons.nth(j).bounding_box()["height"] >= 44 for j in range(buttons.count()))  # a thumb's tap target
    assert buttons.evaluate_all("(all) => all.every((b) => b.lang === 'en')")
    assert phones[0].locator("#class-phone [lang=fr]").count() == 1  # the French so far, marked for a screen reader
    assert "Step 1 of" in phones[0].locator("#class-phone").inner_text()

    best = int(result.attention[0].argmax())
    for phone, j in zip(phones, (best, (best + 1) % len(result.source_tokens))):
        phone.locator(PIECES).nth(j).tap()
        phone.locator("#student-voted").get_by_text("Your vote for step 1").wait_for(timeout=10_000)
    assert phones[0].locator(PIECES).nth(best).get_attribute("aria-pressed") == "true"
    assert sum(teacher.predict(code, api_name="/class_tally")["counts"]) == 2
    assert phones[0].locator(".attn-class-votes").count() == 0  # the class's votes stay hidden until the reveal

    teacher.predict(code, key, api_name="/class_reveal")
    for phone in phones:  # α beside the class's votes, within a poll
        phone.locator("#class-phone-answer .attn-class-alpha").first.wait_for(timeout=10_000)
    alphas = phones[1].locator("#class-phone-answer tbody tr td:last-child .attn-class-value").all_inner_texts()
    assert alphas == [f"{a:.2f}" for a in result.attention[0]]
    assert phones[1].locator(PIECES).first.is_disabled()  # nothing to vote on once revealed
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    phones[0].screenshot(path=str(SCREENSHOT_DIR / "student-page-revealed-390.png"), full_page=True)
    assert serious_violations(phones[0]) == []

    teacher.predict(code, key, api_name="/class_next")
    phones[0].wait_for_function("() => document.querySelector('#class-phone .attn-class-step').textContent.includes('Step 2 of')",
                                timeout=10_000)
    assert phones[0].locator(f"{PIECES}[aria-pressed=true]").count() == 0  # a new step, a new guess
    assert phones[0].locator("#class-phone-answer .attn-class-alpha").count() == 0
    for _ in range(len(result.target_tokens) - 1):  # on through the last step, to the summary
        teacher.predict(code, key, api_name="/class_next")
    phones[0].locator("#class-phone-answer .attn-class-summary").wait_for(timeout=10_000)
    assert phones[0].locator("#class-phone-answer .attn-class-summary tbody tr").count() == len(result.target_tokens)
    assert not phones[0].locator("#student-pieces").is_visible()  # nothing left to vote on
    assert phones[0].evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]  # the summary fits
    phones[0].screenshot(path=str(SCREENSHOT_DIR / "student-page-summary-390.png"), full_page=True)
    assert serious_violations(phones[0]) == []
    lesson = phones[0].locator(".attn-class-lesson a").first.get_attribute("href")
    assert phones[0].evaluate(f"() => new URL({lesson!r}, document.baseURI).href").startswith(f"{app_url}#section-")
    for phone in phones:
        phone.close()


@pytest.mark.parametrize("width", [320, 768])
def test_the_student_page_reads_from_a_small_phone_to_a_tablet_and_nothing_moves_once_drawn(browser, app_url, opened, width):
    code, _, _ = opened
    phone = join(browser, f"{app_url}join/{code}", {"width": width, "height": 800})
    phone.wait_for_timeout(2500)  # past its first poll
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= width
    assert phone.evaluate(LAYOUT_SHIFT) == 0
    phone.screenshot(path=str(SCREENSHOT_DIR / f"student-page-{width}.png"), full_page=True)
    phone.close()


def test_a_link_made_before_opens_the_student_page_which_links_the_whole_page(browser, app_url, opened):
    code, _, _ = opened
    phone = join(browser, f"{app_url}?room={code}#section-classroom")
    assert phone.url.split("#")[0] == f"{app_url}join/{code}"
    phone.get_by_role("link", name="The whole lesson page, with this room in it").click()
    phone.locator("#class-phone .attn-class-step").wait_for(timeout=90_000)  # the whole page's own student view
    assert phone.url.startswith(f"{app_url}?room={code}&full=1")
    phone.close()


def test_a_lost_connection_is_said_plainly_and_the_page_goes_on_when_it_is_back(browser, app_url, opened):
    code, _, _ = opened
    phone = join(browser, f"{app_url}join/{code}")
    cut = lambda url: url.split("?")[0].endswith(f"/rooms/{code}")  # noqa: E731
    phone.route(cut, lambda route_, request: route_.abort())
    phone.locator("#class-phone-note").get_by_text(OFFLINE).wait_for(timeout=20_000)
    phone.unroute(cut)
    phone.wait_for_function("() => document.querySelector('#class-phone-note').textContent === ''", timeout=20_000)
    phone.close()


@pytest.mark.parametrize("dropped, line", [(1, "Your vote for step 1"), (1 + len(VOTE_RETRIES_S), "could not be sent")])
def test_a_vote_lost_on_the_way_is_sent_again_and_said_when_it_never_gets_through(browser, app_url, teacher, opened,
                                                                                  dropped, line):
    code, _, _ = opened
    phone = browser.new_page(viewport=PHONE, has_touch=True)
    seen = vote_calls_dropped(phone, dropped)
    phone.goto(f"{app_url}join/{code}", wait_until="load")
    phone.locator(PIECES).nth(0).tap()
    phone.locator("#student-voted").get_by_text(line).wait_for(timeout=20_000)
    assert sum(teacher.predict(code, api_name="/class_tally")["counts"]) == (1 if dropped == 1 else 0)
    assert seen == [True] * dropped + ([False] if dropped == 1 else [])
    phone.close()


def test_a_page_for_a_room_that_is_not_open_says_so(browser, app_url):
    phone = browser.new_page(viewport=PHONE)
    phone.goto(f"{app_url}join/ZZZZZZ", wait_until="load")
    assert "There is no open room 'ZZZZZZ'" in phone.locator("#class-phone-note").inner_text()
    assert phone.locator(PIECES).count() == 0
    phone.close()

"""Predict, then reveal in a real browser: a teacher's projector (1440 px) and three phones (390 px) play a room
in the whole page's student view (?room=CODE&full=1); the student's own page is test_browser_student_page's."""
import time

import pytest

import app
from attn_demo.ui.classroom import POLL_S, VOTE_RETRIES_S
from test_browser import SCREENSHOT_DIR, open_app, serious_violations

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


# the votes the projector shows, summed over the English pieces
PROJECTOR_VOTES = """() => [...document.querySelectorAll('#class-projector .attn-class-table tbody tr')]
    .reduce((sum, row) => sum + Number(row.querySelector('td .attn-class-value')?.textContent || 0), 0)"""


def test_a_teacher_and_three_phones_play_a_room_through_vote_reveal_and_next(shipped, browser, app_url):
    teacher = browser.new_page(viewport={"width": 1440, "height": 900})
    open_app(teacher, app_url)  # the page's sentence and models on screen
    result = shipped.translate.models[app.OPENING_PICKS[0]].translator.translate(
        teacher.get_by_role("textbox", name="English sentence").input_value())
    teacher.locator("#class-open").click()
    teacher.wait_for_function("() => document.querySelector('#class-code input, #class-code textarea')?.value.length === 6",
                              timeout=60_000)
    code = teacher.locator("#class-code").get_by_role("textbox").input_value()
    link = teacher.locator("#class-link").get_by_role("textbox").input_value()
    assert link == f"{app_url}join/{code}"  # the student's page (test_browser_student_page)
    full = f"{app_url}?room={code}&full=1#section-classroom"
    teacher.locator("#class-qr svg").wait_for(timeout=10_000)
    teacher.locator("#class-projector .attn-class-table").wait_for(timeout=10_000)

    phones = []
    for k in range(3):  # three students: three voters
        phone = browser.new_page(viewport=PHONE, has_touch=True, profile=f"phone {k}")
        phone.goto(full, wait_until="load")
        phone.locator("#class-phone .attn-class-step").wait_for(timeout=60_000)
        phones.append(phone)
    buttons = phones[0].locator("#class-vote label")
    assert buttons.count() == len(result.source_tokens)
    assert buttons.all_inner_texts() == result.source_tokens
    assert all(buttons.nth(j).bounding_box()["height"] >= 44 for j in range(buttons.count()))  # a thumb's tap target
    assert not phones[0].locator("#class-teacher").is_visible() and not phones[0].locator("#class-open").is_visible()
    assert "Step 1 of" in phones[0].locator("#class-phone").inner_text()

    best = int(result.attention[0].argmax())
    picks = [best, best, (best + 1) % len(result.source_tokens)]
    for phone, j in zip(phones, picks):
        phone.locator("#class-vote label").nth(j).tap()
    for phone in phones:  # each vote recorded by the room
        phone.locator("#class-voted").get_by_text("Your vote for step 1").wait_for(timeout=10_000)
    cast = time.monotonic()
    teacher.wait_for_function(f"() => ({PROJECTOR_VOTES})() === 3", timeout=10_000)
    assert time.monotonic() - cast <= 2 * POLL_S + 1  # on the projector by its next poll, with room for a busy machine
    phones[2].locator("#class-vote label").nth(best).tap()  # changed her mind: replaced, not added
    teacher.wait_for_function("() => document.querySelectorAll('#class-projector .attn-class-table tbody tr')"
                              f"[{best}].querySelector('.attn-class-value').textContent === '3'", timeout=10_000)
    assert teacher.evaluate(PROJECTOR_VOTES) == 3
    assert phones[0].locator("#class-student .attn-class-votes").count() == 0  # the class's votes stay hidden until the reveal

    teacher.get_by_role("button", name="Reveal", exact=True).click()
    teacher.locator("#class-projector .attn-class-result").wait_for(timeout=10_000)
    assert "3 of 3 votes picked it" in teacher.locator("#class-projector .attn-class-result").inner_text()
    assert "α on the class's picks" in teacher.locator("#class-agreement").inner_text()
    for phone in phones:  # the phones draw α too
        phone.locator("#class-student .attn-class-alpha").first.wait_for(timeout=10_000)
    alphas = phones[1].locator("#class-student .attn-class-table tbody tr td:last-child .attn-class-value").all_inner_texts()
    assert alphas == [f"{a:.2f}" for a in result.attention[0]]
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    teacher.locator("#section-classroom").screenshot(path=str(SCREENSHOT_DIR / "classroom-projector-1440.png"))
    phones[0].locator("#section-classroom").screenshot(path=str(SCREENSHOT_DIR / "classroom-phone-390.png"))
    # the room's section (the whole page is checked as it opens)
    assert serious_violations(teacher, "#section-classroom") == []
    assert serious_violations(phones[0], "#section-classroom") == []

    teacher.get_by_role("button", name="Next step", exact=True).click()
    for phone in phones:  # a new step, a new guess: the old pick is forgotten
        phone.wait_for_function("() => document.querySelector('#class-phone .attn-class-step')?.textContent.includes('Step 2 of')",
                                timeout=10_000)
        phone.wait_for_function("() => !document.querySelector('#class-vote input:checked')", timeout=10_000)
    assert phones[0].locator("#class-student .attn-class-alpha").count() == 0
    assert "French so far: " + result.target_tokens[0].replace("▁", "").strip() in phones[0].locator("#class-phone").inner_text()
    phones[0].locator("#class-vote label").nth(0).tap()
    phones[0].locator("#class-voted").get_by_text("Your vote for step 2").wait_for(timeout=10_000)

    for _ in range(len(result.target_tokens) - 1):  # on to the end
        teacher.get_by_role("button", name="Next step", exact=True).click()
        teacher.wait_for_timeout(200)
    teacher.locator("#class-projector .attn-class-summary").wait_for(timeout=10_000)
    rows = teacher.locator("#class-projector .attn-class-summary tbody tr")
    assert rows.count() == len(result.target_tokens)
    assert rows.nth(0).locator("td").last.inner_text() == "✓ yes"  # step 1: the class's pick was the model's
    lesson = teacher.locator("#class-projector .attn-class-lesson")
    assert "</s>" in lesson.inner_text() and lesson.get_by_role("link").count() == 2
    phones[0].locator("#class-student .attn-class-summary").wait_for(timeout=10_000)
    assert not phones[0].locator("#class-vote").is_visible()  # nothing left to vote on
    assert phones[0].evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    teacher.locator("#section-classroom").screenshot(path=str(SCREENSHOT_DIR / "classroom-summary-1440.png"))
    phones[0].locator("#section-classroom").screenshot(path=str(SCREENSHOT_DIR / "classroom-summary-390.png"))
    for page in (teacher, *phones):
        page.close()


def test_a_link_to_a_room_that_is_not_open_says_so_on_the_phone(browser, app_url):
    phone = browser.new_page(viewport=PHONE)
    phone.goto(f"{app_url}?room=ZZZZZZ&full=1#section-classroom", wait_until="load")
    phone.locator("#class-phone-note").get_by_text("There is no open room 'ZZZZZZ'").wait_for(timeout=60_000)
    assert phone.locator("#class-vote label").count() == 0
    phone.close()


def vote_calls_dropped(phone, dropped: int) -> list:
    """Refuse the first `dropped` of the page's vote calls (its first and its retries) with HTTP 503, as a busy app or
    a load balancer with no process to send them to does; the calls seen, each True where refused."""
    seen = []

    def handle(route_, request):
        seen.append(len(seen) < dropped)
        return route_.fulfill(status=503, json={"error": "busy"}) if seen[-1] else route_.continue_()

    phone.route(lambda url: url.split("?")[0].endswith("/votes") and "/rooms/" in url, handle)
    return seen


@pytest.mark.parametrize("dropped, line", [(1, "Your vote for step 1"), (1 + len(VOTE_RETRIES_S), "could not be sent")])
def test_a_phone_sends_a_failed_vote_again_by_itself_and_says_so_when_it_never_gets_through(browser, app_url, dropped, line):
    from gradio_client import Client

    code, _ = Client(app_url, verbose=False).predict("The red car.", app.OPENING_PICKS[0], api_name="/class_open")
    phone = browser.new_page(viewport=PHONE, has_touch=True)
    seen = vote_calls_dropped(phone, dropped)
    phone.goto(f"{app_url}?room={code}&full=1#section-classroom", wait_until="load")
    phone.locator("#class-phone .attn-class-step").wait_for(timeout=60_000)
    phone.locator("#class-vote label").nth(0).tap()
    phone.locator("#class-voted").get_by_text(line).wait_for(timeout=20_000)
    state = Client(app_url, verbose=False).predict(code, api_name="/class_tally")
    assert sum(state["counts"]) == (1 if dropped == 1 else 0)
    assert seen == [True] * dropped + ([False] if dropped == 1 else [])  # sent again after each failed call, no more
    phone.close()


def test_a_phone_whose_room_closes_says_so_and_keeps_its_last_view(browser, app_url):
    """A poll refused (the room closed: expired, or the app's rooms lost) is said above the room; the phone goes on."""
    from gradio_client import Client

    code, _ = Client(app_url, verbose=False).predict("The red car.", app.OPENING_PICKS[0], api_name="/class_open")
    phone = browser.new_page(viewport=PHONE, has_touch=True)
    phone.goto(f"{app_url}?room={code}&full=1#section-classroom", wait_until="load")
    phone.locator("#class-phone .attn-class-step").wait_for(timeout=60_000)
    phone.route(lambda url: url.split("?")[0].endswith(f"/rooms/{code}"),  # its polls now ask for a room never opened
                lambda route_, request: route_.continue_(url=request.url.replace(f"/rooms/{code}", "/rooms/ZZZZZZ")))
    # within a few polls (every PHONE_POLL_S); a loaded machine's Chromium may take several seconds a poll
    phone.locator("#class-phone-note").get_by_text("There is no open room 'ZZZZZZ'").wait_for(timeout=40_000)
    assert "Step 1 of" in phone.locator("#class-phone").inner_text()
    phone.close()

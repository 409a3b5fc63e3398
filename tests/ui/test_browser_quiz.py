"""The quiz in a real browser, on a student's phone: answers about attention and about the translation on screen,
each checked."""
import pytest

from test_browser import SCREENSHOT_DIR, open_app

pytestmark = pytest.mark.browser


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


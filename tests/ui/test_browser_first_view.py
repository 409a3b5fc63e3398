"""A phone's first view in a real browser: the opening grids in the page's HTML, before any script, then the page alone."""
from urllib.request import urlopen

import pytest

from attn_demo.ui.translate import EXAMPLES, SIDES
from test_browser import SCREENSHOT_DIR

pytestmark = pytest.mark.browser


def test_a_phone_sees_the_opening_grids_in_the_page_s_html_then_the_page_alone(shipped, browser, app_url):
    """Before any script has run (a phone still loading them), the HTML the server sends shows the opening
    example's two grids with the models' own α; once the page has drawn its grids, they are the only ones."""
    state = shipped.translate.translate(EXAMPLES[0], 1, False).state
    loading = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = loading.new_page()
    page.goto(app_url, wait_until="load")
    for side, (model, view) in zip(SIDES, shipped.translate.models.sides(state)):
        titles = page.locator(f"#first-view #{side}-grid rect title").all_text_contents()
        assert [float(title.rsplit("= ", 1)[1]) for title in titles] == [round(float(a), 2) for a in view["result"].attention.ravel()]
        assert view["result"].text in page.locator("#first-view").inner_text()
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "first-view-390.png"))
    loading.close()
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(app_url, wait_until="load")
    page.wait_for_function("() => !document.getElementById('first-view')", timeout=120_000)
    assert page.locator("#left-grid").count() == 1 and page.locator("#left-grid .js-plotly-plot").count() == 1
    assert "first-view" not in urlopen(app_url + "?q=Hello").read().decode()  # a link opens another view: the page alone
    page.close()


def test_the_first_view_benchmark_sees_the_pages_own_grid_before_the_interactive_one(browser, app_url):
    """benchmarks.first_view on one throttled visit: the grid in the HTML comes first (its figures are printed, not asserted)."""
    from benchmarks.first_view import first_grid
    visit = first_grid(browser, app_url, cpu_slowdown=1, mbit=10, latency_ms=40)  # the phone's 4× slowdown is the benchmark's
    assert 0 < visit["ms"] < visit["interactive_ms"] and visit["kB"] > 0


def test_the_first_view_benchmark_times_a_student_s_first_piece_to_tap_on_the_student_page(browser, app_url):
    """benchmarks.first_view's join: the student's page draws its pieces from its one response (figures printed)."""
    from benchmarks.first_view import first_piece, open_room
    visit = first_piece(browser, f"{app_url}join/{open_room(app_url)}", cpu_slowdown=1, mbit=10, latency_ms=40)
    assert 0 < visit["ms"] and 0 < visit["kB"] <= visit["all_kB"] < 50

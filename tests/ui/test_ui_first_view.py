"""The first view in the HTML the server sends: the opening sides' translations and grids, and the middleware
that puts it into the page's HTML, and nowhere else."""
import asyncio
import re

import pytest

from attn_demo.examples import EXAMPLES
from attn_demo.ui.first_view import FirstView, first_view_html
from attn_demo.ui.page import SIDES

PAGE = b'<!doctype html><html><head><title>t</title></head><body\n style="margin: 0"\n><gradio-app></gradio-app></body></html>'


def opening_sides(section, left: str, right: str) -> list:
    state = section.translate(EXAMPLES[0], 1, False, "pieces", left, right).state
    return section.models.sides(state)


@pytest.mark.parametrize("left", ["tiny-bahdanau", "tiny-none"])
def test_the_first_view_shows_each_opening_sides_translation_and_grid_or_why_it_has_none(section, left):
    sides = opening_sides(section, left, "tiny-luong-general")
    shown = first_view_html(sides)
    for side, (model, view) in zip(SIDES, sides):
        grid = re.search(rf'<div class="grid" id="{side}-grid">(.*?)</div>', shown, re.S).group(1)
        result = view["result"]
        assert f"<h2>{model.title}</h2>" in shown
        if model.has_attention:  # a cell for every (t, j), with the model's α in its title
            titles = re.findall(r"α = ([0-9.]+)</title>", grid)
            assert [float(a) for a in titles] == [round(float(a), 2) for a in result.attention.ravel()]
        else:
            assert "<svg" not in grid and "No attention, so no grid." in grid
    assert shown.count('id="left-grid"') == shown.count('id="right-grid"') == 1


def run(middleware, path: str, query: bytes = b"", body: bytes = PAGE, content_type: bytes = b"text/html; charset=utf-8"):
    """One request through the middleware in front of an app that answers `body`: (headers, body) as sent."""
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body[:10], "more_body": True})
        await send({"type": "http.response.body", "body": body[10:]})
    sent = []

    async def send(message):
        sent.append(message)
    scope = {"type": "http", "method": "GET", "path": path, "query_string": query}
    asyncio.run(middleware(app)(scope, None, send))
    headers = dict(sent[0]["headers"])
    page = b"".join(message.get("body", b"") for message in sent[1:])
    assert int(headers[b"content-length"]) == len(page)
    return headers, page


def test_the_page_s_html_gets_the_first_view_right_inside_its_body_and_nothing_else_changes():
    def middleware(app):
        return FirstView(app, first_view="<div id=\"first-view\">é</div>")
    _, page = run(middleware, "/")
    assert page == PAGE.replace(b'"margin: 0"\n>', '"margin: 0"\n><div id="first-view">é</div>'.encode())
    assert run(middleware, "/", query=b"q=Hello")[1] == PAGE  # a link opens another view: the page alone
    assert run(middleware, "/config")[1] == PAGE  # anything but the page passes through
    assert run(middleware, "/", content_type=b"application/json")[1] == PAGE

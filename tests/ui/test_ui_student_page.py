import asyncio
import html
import json
import re

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from attn_demo.classroom.rooms import Rooms
from attn_demo.classroom.stores import store_named
from attn_demo.ui.classroom import ASK, OFFLINE, PHONE_POLL_S, ClassroomSection, join_link
from attn_demo.ui.student_page import StudentPage, older_link

ENGLISH, FRENCH = ["▁the", "▁cat", "</s>"], ["▁le", "▁chat", "</s>"]
ALPHA = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]


def client(rooms: Rooms) -> TestClient:
    """The student page in front of an app that answers "the whole page" (Gradio's, in app.py)."""
    inner = Starlette(routes=[Route("/", lambda request: PlainTextResponse("the whole page"))])
    section = ClassroomSection([], share=None, rooms=rooms)
    return TestClient(StudentPage(inner, section), follow_redirects=False)


@pytest.fixture
def rooms():
    return Rooms(store_named("memory"))


def settings(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="student-settings">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


def test_a_room_s_page_carries_its_state_and_the_rules_of_the_whole_page(rooms):
    code, key = asyncio.run(rooms.open(ENGLISH, FRENCH, ALPHA, "bahdanau-en-fr"))
    reply = client(rooms).get(f"/join/{code}")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert reply.headers["cache-control"] == "no-store"
    page = reply.text
    assert settings(page)["room"] == asyncio.run(rooms.state(code))  # drawn from its first response, no poll needed
    assert settings(page)["poll_s"] == PHONE_POLL_S and settings(page)["offline"] == OFFLINE
    assert key not in page and ASK in page and '<base href="../">' in page
    assert "plotly" not in page.lower() and "<script src" not in page and "<link" not in page  # one response, all of it
    buttons = re.findall(r'<button type="button" lang="en" aria-pressed="false">([^<]*)</button>', page)
    assert [html.unescape(b) for b in buttons] == ENGLISH  # there to tap before any script runs
    assert len(reply.content) < 50_000  # a phone's whole download


def test_the_pieces_in_the_page_s_html_are_escaped_and_disabled_once_revealed(rooms):
    code, key = asyncio.run(rooms.open(["▁<b>x</b>", "</s>"], ["▁y", "</s>"], [[0.5, 0.5], [0.5, 0.5]]))
    page = client(rooms).get(f"/join/{code}").text
    assert "<b>x" not in page and "▁&lt;b&gt;x&lt;/b&gt;</button>" in page
    asyncio.run(rooms.reveal(code, key))
    assert client(rooms).get(f"/join/{code}").text.count(' disabled>') == 2


def test_a_room_s_page_shows_the_votes_only_once_revealed(rooms):
    code, key = asyncio.run(rooms.open(ENGLISH, FRENCH, ALPHA))
    asyncio.run(rooms.vote(code, "v" * 16, 1, 1))
    assert settings(client(rooms).get(f"/join/{code}").text)["room"]["counts"] is None
    asyncio.run(rooms.reveal(code, key))
    shown = settings(client(rooms).get(f"/join/{code}").text)["room"]
    assert shown["counts"] == [0, 1, 0] and shown["alpha"] == ALPHA[0]


def test_a_link_made_before_opens_the_student_page_and_the_whole_page_stays_one_link_away(rooms):
    code, _ = asyncio.run(rooms.open(ENGLISH, FRENCH, ALPHA))
    phone = client(rooms)
    moved = phone.get(f"/?room={code}")
    assert moved.status_code == 303 and moved.headers["location"] == f"join/{code}"
    assert phone.get(f"/?room={code}&full=1").text == "the whole page"
    assert phone.get("/").text == "the whole page"
    full = re.search(r'id="student-full"><a href="([^"]+)"', phone.get(f"/join/{code}").text).group(1)
    assert full == f"./?room={code}&amp;full=1#section-classroom"  # from the page's base, the app's address
    assert join_link("http://192.168.1.23:7860/", code) == f"http://192.168.1.23:7860/join/{code}"


@pytest.mark.parametrize("query, room", [(b"room=ABC234", "ABC234"), (b"room=+abc234+&x=1", "abc234"),
                                         (b"room=ABC234&full=1", ""), (b"full=1", ""), (b"", ""),
                                         (b"room=" + b"Z" * 10_000, "Z" * 24)])
def test_an_older_link_names_its_room_unless_it_asks_for_the_whole_page(query, room):
    assert older_link(query) == room


@pytest.mark.parametrize("path", ["/join/ZZZZZZ", "/join/" + "Z" * 10_000, "/join/<script>alert(1)<%2Fscript>"])
def test_a_page_for_a_room_that_is_not_open_says_so_and_is_small(rooms, path):
    reply = client(rooms).get(path)
    assert reply.status_code == 404 and "There is no open room" in settings(reply.text)["refusal"]
    assert "<script>alert" not in reply.text and settings(reply.text)["room"] is None
    assert len(reply.content) < 50_000


def test_a_dead_store_is_said_on_the_page_and_the_page_asks_again():
    dead = Rooms(store_named("redis://127.0.0.1:1/0"))
    reply = client(dead).get("/join/ABC234")
    assert reply.status_code == 503 and settings(reply.text)["refusal"]


def test_the_student_page_leaves_every_other_call_to_the_app(rooms):
    phone = client(rooms)
    assert phone.post("/join/ABC234").text == "Not Found"  # the inner app's answer: only GET is a page
    assert phone.post("/?room=ABC234").text == "Method Not Allowed"  # the inner app's route, not a redirect

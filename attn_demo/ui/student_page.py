"""The student's page of a room: Predict, then reveal alone, for a phone in a crowded lecture hall.

    GET /join/CODE              the room's page: its HTML, style and scripts in one response (BENCHMARKS.md)
    GET /?room=CODE…            a link made before it: sent on to join/CODE (303)
    GET /?room=CODE&full=1      the whole page, its classroom section on the room (ui.classroom)

The teacher's page shows this link and its QR code (classroom.join_link). The whole page is every section and
Gradio's scripts; this one carries the room's state as it is when asked and its buttons, so a phone shows the pieces
to tap from its first response, then polls and votes through the room routes (ui.room_routes) with the same calls, rules and
retries as the whole page's phone view (POLL_ROOM, SEND_VOTE, VOTER_JS: classroom.py), and draws the room with the
same classroom.js. Nothing of a phone is kept but the random voter id in its browser; every call names its room,
so any of several app processes sharing the rooms' Redis can answer it (no sticky session).
"""
import html
import json
from pathlib import Path
from urllib.parse import parse_qs, quote

from starlette.responses import HTMLResponse, RedirectResponse

from attn_demo.classroom.rooms import ClassroomError
from attn_demo.ui.classroom import (ASK, FULL_PAGE, JOIN_PATH, OFFLINE, PHONE_ID, PHONE_POLL_S, POLL_ROOM, SEND_VOTE,
                                    TAP, VOTER_JS, full_page_link)
from attn_demo.ui.room_routes import refusal_status

HERE = Path(__file__).parent
PREFIX = "/" + JOIN_PATH
LONGEST_CODE = 24  # characters of a path's code read at all (the rooms cut a code typed with spaces to this)
# how much longer a phone waits after each refused poll (a room closed, too many wrong codes at once), up to the
# most: a room gone stays said without a lecture hall's phones asking for it every 2 s
BACK_OFF, MOST_WAIT_S = 2.0, 30.0
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="../">
<title>{title}</title>
<style>{tables_css}{css}</style>
</head>
<body>
<main id="student-page">
<h1>Predict, then reveal</h1>
<p id="{phone}-note" class="attn-student-note" role="status" aria-live="polite"></p>
<div id="{phone}"></div>
<h2 id="student-ask">{ask}</h2>
<p id="student-tap">{tap}</p>
<div id="student-pieces" role="group" aria-labelledby="student-ask">{pieces}</div>
<p id="student-voted" class="attn-student-note" role="status" aria-live="polite"></p>
<div id="{phone}-answer"></div>
<p id="student-full"><a href="{full}">The whole lesson page, with this room in it</a></p>
</main>
<script type="application/json" id="student-settings">{settings}</script>
<script>({classroom_js})();</script>
<script>({student_js})(JSON.parse(document.getElementById("student-settings").textContent), {poll}, {vote}, {voter});</script>
</body>
</html>
"""
ASSETS = {name: (HERE / name).read_text(encoding="utf-8")
          for name in ("classroom.js", "room_tables.css", "student_page.js", "student_page.css")}


def script_json(value) -> str:
    """JSON that a <script> element holds as written: no "</script>" or "<!--" can end or change it."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def piece_buttons(room: dict | None) -> str:
    """A button for each English piece, in the HTML itself: there to tap at the first paint (student_page.js binds
    them, and redraws them for another room)."""
    if not room or room["finished"]:
        return ""
    disabled = " disabled" if room["revealed"] else ""
    return "".join(f'<button type="button" lang="en" aria-pressed="false"{disabled}>{html.escape(piece)}</button>'
                   for piece in room["english"])


def student_html(code: str, room: dict | None, refusal: str = "") -> str:
    """The page of room `code`: its state as now (room), or the refusal to say instead."""
    settings = {"code": code, "room": room, "refusal": refusal, "phone": PHONE_ID, "poll_s": PHONE_POLL_S,
                "back_off": BACK_OFF, "most_wait_s": MOST_WAIT_S, "offline": OFFLINE, "sending": "Sending your vote…"}
    return PAGE.format(
        title=html.escape(f"Room {code} · Predict, then reveal"), tables_css=ASSETS["room_tables.css"],
        css=ASSETS["student_page.css"], phone=PHONE_ID, pieces=piece_buttons(room), ask=html.escape(ASK),
        tap=html.escape(TAP), full=html.escape(full_page_link(code)), settings=script_json(settings),
        classroom_js=ASSETS["classroom.js"], student_js=ASSETS["student_page.js"], poll=POLL_ROOM, vote=SEND_VOTE,
        voter=VOTER_JS)


class StudentPage:
    """ASGI middleware answering PREFIX's pages from `section` (ui.classroom.ClassroomSection), and sending an older
    room link (/?room=CODE) to them; anything else goes on to the app."""

    def __init__(self, app, section):
        self.app, self.section = app, section

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        if path.startswith(PREFIX):
            reply = await self.page(path.removeprefix(PREFIX).strip("/"))
        elif path == "/" and (code := older_link(scope.get("query_string", b""))):
            reply = RedirectResponse(JOIN_PATH + quote(code, safe=""), 303)  # relative: the app's address, behind a proxy too
        else:
            return await self.app(scope, receive, send)
        reply.headers["Cache-Control"] = "no-store"  # the room as it is now
        await reply(scope, receive, send)

    async def page(self, code: str) -> HTMLResponse:
        """The room's page: 200 with its state, or the refusal said on it with its status (refusal_status)."""
        code = code[:LONGEST_CODE]
        try:
            room = await self.section.phone_view(code)
        except ClassroomError as refusal:
            return HTMLResponse(student_html(code, None, str(refusal)), refusal_status(refusal))
        return HTMLResponse(student_html(room["room"], room))


def older_link(query: bytes) -> str:
    """The room that a link of the whole page names (?room=CODE), unless it asks for the whole page; "" otherwise."""
    fields = parse_qs(query.decode("latin-1"))
    code = (fields.get("room") or [""])[0].strip()
    name, _, value = FULL_PAGE.partition("=")
    return "" if not code or value in fields.get(name, []) else code[:LONGEST_CODE]

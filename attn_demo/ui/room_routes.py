"""A phone's calls to its room as plain HTTP beside the page, outside Gradio's events: a poll or a vote costs the
server about 1 ms of a core instead of Gradio's 10 (BENCHMARKS.md), so a lecture hall's phones voting in the same
second fit one core.

    GET  /rooms/CODE                                    the room as a phone shows it: 200 {"room": {…}}
    POST /rooms/CODE/votes  {"voter", "step", "piece"}  a phone's pick for the step: 200 {"line": "Your vote…"}

A refusal of the rooms (no such room, a step gone by, a malformed vote, a dead store…) is 4xx {"error": message}, the
message HTML-escaped as the page writes it. The rooms' rules are attn_demo.classroom.rooms's, the same as the REST API's
class_state and class_vote (ui.classroom), which stay for clients. A call awaits the rooms on the server's own loop,
in no worker thread: rooms in memory answer in microseconds, and Redis's are awaited (attn_demo.classroom.stores), so a
slow store holds up that call alone, never the server's other requests.
"""
import html
import json

from starlette.responses import JSONResponse

from attn_demo.classroom.rooms import ClassroomError, NoSuchRoom, RoomsDown

PREFIX = "/rooms/"
MAX_BODY = 2048  # bytes: a vote is under 200
BALLOT = ("voter", "step", "piece")


class RoomRoutes:
    """ASGI middleware answering PREFIX's calls from `section` (ui.classroom.ClassroomSection); anything else goes on
    to the page."""

    def __init__(self, app, section):
        self.app, self.section = app, section

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(PREFIX):
            return await self.app(scope, receive, send)
        code, _, rest = path.removeprefix(PREFIX).partition("/")
        if scope["method"] == "GET" and not rest:
            reply = await self.answer(self.room, code)
        elif scope["method"] == "POST" and rest == "votes":
            reply = await self.vote(code, receive)
        else:
            reply = JSONResponse({"error": "Not a room call: GET /rooms/CODE or POST /rooms/CODE/votes."}, 404)
        reply.headers["Cache-Control"] = "no-store"  # a room changes with every vote
        await reply(scope, receive, send)

    async def vote(self, code: str, receive) -> JSONResponse:
        body = await read_body(receive)
        try:
            ballot = json.loads(body) if body is not None else None
        except ValueError:
            ballot = None
        if not isinstance(ballot, dict) or set(ballot) != set(BALLOT):
            return JSONResponse({"error": "A vote is one JSON object with voter, step and piece."}, 400)
        return await self.answer(self.line, code, *(ballot[k] for k in BALLOT))

    async def room(self, code: str) -> dict:
        return {"room": await self.section.phone_view(code)}

    async def line(self, code: str, voter, step, piece) -> dict:
        return {"line": await self.section.vote_line(code, voter, step, piece)}

    @staticmethod
    async def answer(call, *args) -> JSONResponse:
        """await call(*args)'s reply, or the rooms' refusal with its status (refusal_status)."""
        try:
            return JSONResponse(await call(*args))
        except ClassroomError as refusal:
            return JSONResponse({"error": html.escape(str(refusal))}, refusal_status(refusal))


def refusal_status(refusal: ClassroomError) -> int:
    """The HTTP status of a refusal of the rooms: 404 where the room is not open, 503 where their store is out of
    reach (a phone asks again), 400 for any other."""
    return 404 if isinstance(refusal, NoSuchRoom) else 503 if isinstance(refusal, RoomsDown) else 400


async def read_body(receive) -> bytes | None:
    """The request's body, or None past MAX_BODY (what is left unread is dropped with the connection's reply)."""
    body, more = b"", True
    while more:
        message = await receive()
        body, more = body + message.get("body", b""), message.get("more_body", False)
        if len(body) > MAX_BODY:
            return None
    return body

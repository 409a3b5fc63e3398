"""Predict, then reveal: the class activity's section, a teacher's projector view and each student's phone view.

The teacher opens a room on the sentence and the model on screen (attn_demo.classroom.rooms holds the rooms) and
shows its code, link and QR code. A phone that opens the link (join/CODE) gets the student's page
(ui.student_page), which holds the room alone: the sentence, the French written so far, and a button for each
English piece, to guess which one the model will look at to write the next French piece. The same student view
is in this section of the whole page, for a student who opens it there (?room=CODE&full=1). The projector polls
the votes every POLL_S and draws them as they arrive (the phones poll every PHONE_POLL_S); Reveal draws the
model's α beside them (on the phones too), Next step moves the room on, and after the last step the room sums up
where the class and the model agreed. classroom.js draws both views from the JSON that class_tally (projector) and
class_state (phone) send; the teacher's key never leaves their page.
"""
import asyncio
import html
from urllib.parse import quote

import gradio as gr

from attn_demo.classroom.rooms import AGREEMENT, LESSON, ClassroomError, Rooms
from attn_demo.models.tokenizer import normalise_english
from attn_demo.ui.page import CONTENTS, HIDDEN_WHEN_EMPTY, section_id
from attn_demo.ui.share import PAGE_ADDRESS, class_address, qr_code

SECTION = "classroom"  # its key in page.CONTENTS: the whole page's link to a room opens it on this section
JOIN_PATH = "join/"  # a room's student page: the app's address, then join/CODE (ui.student_page)
# in a ?room=CODE link: the whole page, not the student page such a link opens (Gradio reads ?page= as its own)
FULL_PAGE = "full=1"
POLL_S = 1.0  # how often the projector asks for the votes: a vote shows there within about a second
# how often a phone asks for the room (a new step, the reveal), from the room routes: 300 phones asking every 2 s
# take under a fifth of a core (benchmarks/rest_load.py)
PHONE_POLL_S = 2.0
# The room calls decode nothing: the page sends them outside the queue, and a REST client's (which Gradio always
# queues) run in a group of their own, ROOM_CONCURRENCY at a time, never behind a translation's decoding slots
ROOM_CONCURRENCY = 8
ROOM_CALLS = {"queue": False, "concurrency_id": "rooms", "concurrency_limit": ROOM_CONCURRENCY}
VOTE_RETRIES_S = (1, 3)  # a vote that could not be sent is sent again after these waits, then given up
NOT_SENT = "⚠️ Your vote could not be sent: the app did not answer. Check your connection, then tap your piece again."
# A phone's poll and vote go to the room routes (ui.room_routes), outside Gradio's events: the page's own address,
# then rooms/CODE
ROOM_URL = "(code) => new URL(`rooms/${encodeURIComponent(code || '')}`, document.baseURI)"
OFFLINE = (f"⚠️ The app did not answer just now (the connection, or the app restarting): asking again every "
           f"{PHONE_POLL_S:g} s.")
# the room as it is now, and the note above it: a refusal (the room closed) is said there, and so is a poll that
# failed on the way (the network, a restarting app), which changes nothing else: the next one asks again
POLL_ROOM = f"""async (code, shown) => {{
  try {{
    const reply = await fetch(({ROOM_URL})(code), {{ cache: "no-store" }}), answer = await reply.json();
    if (reply.ok) return [answer.room, ""];
    if (reply.status < 500) return [shown, "⚠️ " + answer.error];
  }} catch (error) {{}}
  return [shown, {OFFLINE!r}];
}}"""
# a phone's pick, sent; a call that failed on the way (or a store out of reach, 503) is sent again after each of
# VOTE_RETRIES_S, and a refusal is said at once (a vote replaces the phone's earlier one: sent twice, counted once)
SEND_VOTE = f"""async (code, voter, step, piece) => {{
  for (const wait of [0, ...{list(VOTE_RETRIES_S)}]) {{
    await new Promise((done) => setTimeout(done, wait * 1000));
    try {{
      const reply = await fetch(`${{({ROOM_URL})(code)}}/votes`, {{ method: "POST", headers: {{ "Content-Type": "application/json" }},
                                                               body: JSON.stringify({{ voter, step, piece }}) }});
      const answer = await reply.json();
      if (reply.ok) return answer.line;
      if (reply.status < 500) return "⚠️ " + answer.error;
    }} catch (error) {{}}
  }}
  return {NOT_SENT!r};
}}"""
PROJECTOR_ID, PHONE_ID = "class-projector", "class-phone"  # the elements classroom.js draws into
VOTER_STORE = "attn-demo-voter"  # localStorage key of the page's random voter id (no name, nothing personal)
LESSON_LINKS = ("explanation", "alignment")  # the sections the summary's lesson points at
EXPLANATION = """A class activity. Open a room on the sentence and the model above; the class joins with the code or the QR code.
At each step every phone guesses which English piece the model will look at to write the next French piece;
the votes arrive here as they are cast. **Reveal** shows the model's α for the step, **Next step** moves on,
and after the last step a summary shows where the class and the model agreed."""
ASK = "Which English piece will the model look at to write the next French piece?"
TAP = "Tap one. You can change your mind until your teacher reveals the answer."
QUESTION = f"### {ASK}\n{TAP}"
# the page's voter id, made once and kept in this browser (random: no name, nothing personal)
VOTER_JS = f"""() => {{
  let voter = localStorage.getItem({VOTER_STORE!r});
  if (!voter) {{
    voter = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem({VOTER_STORE!r}, voter);
  }}
  return voter;
}}"""
# the voter id, and the room the page's link names
JOIN_JS = f"""() => [({VOTER_JS})(), new URLSearchParams(window.location.search).get("room") || ""]"""
DRAW_PROJECTOR = f"(room) => {{ window.attnClassroom.view({PROJECTOR_ID!r}).draw(room); }}"
# a phone draws the room, and where the room has moved on, forgets its pick: a new step, a new guess
FOLLOW_ON_PHONE = f"""(room, step, pick) => {{
  window.attnClassroom.view({PHONE_ID!r}).draw(room);
  return room && room.step !== step ? [room.step, null] : [step, pick];
}}"""


async def refused(call, *args):
    """await call(*args), with a refusal of the rooms as a message on the page (and for a client) instead of a
    traceback."""
    try:
        return await call(*args)
    except ClassroomError as error:
        raise gr.Error(str(error), print_exception=False) from None


def join_link(address: str, code: str) -> str:
    """The link and QR code a class joins by: the student's page of the room (ui.student_page)."""
    return f"{address}{JOIN_PATH}{code}"


def full_page_link(code: str) -> str:
    """The whole page with the room in its section, relative to the app's address: for a student who wants the lesson."""
    return f"./?room={quote(code, safe='')}&{FULL_PAGE}#{section_id(SECTION)}"


class ClassroomSection:
    """The section's handlers over the catalogue and one set of rooms for the whole app; share is the page's
    ShareSection, whose reach (where the app opens, once it listens) the join link follows."""

    def __init__(self, models: list, share, rooms: Rooms | None = None):
        self.models = {model.key: model for model in models}
        self.share = share
        self.rooms = rooms or Rooms()

    async def open_room(self, sentence: str, model_key: str) -> dict:
        """class_open: translate the sentence greedily with the model (as the page does, from its cache) and open
        a room on it; the room's code and the teacher's key (a client receives them as a pair)."""
        model = self.models.get(model_key)
        if model is None:
            raise gr.Error(f"No model is called {str(model_key)[:80]!r} here.", print_exception=False)
        if not model.has_attention:
            raise gr.Error(f"{model.title} has no attention, so there is no α to guess: pick a model with attention "
                           "to open a room.", print_exception=False)
        try:  # a new sentence is decoded: in a worker thread, as Gradio calls a plain function, not on the loop
            view = await asyncio.to_thread(model.view, normalise_english(sentence), 1)
        except ValueError as error:
            raise gr.Error(str(error), print_exception=False) from None
        result = view["result"]
        code, key = await refused(self.rooms.open, result.source_tokens, result.target_tokens, result.attention, model.key)
        return {self.code: code, self.key: key}

    async def phone_view(self, room: str) -> dict:
        """What a phone shows (attn_demo.classroom.rooms.Room.view); a refusal raises the rooms' ClassroomError. The page's
        phones ask ui.room_routes for it, a REST client class_state."""
        return self.with_lesson(await self.rooms.state(room))

    async def state(self, room: str) -> dict:
        """class_state: phone_view, a refusal as a message."""
        return await refused(self.phone_view, room)

    async def tally(self, room: str) -> dict:
        """class_tally: what the projector shows, the votes per English piece included."""
        return self.with_lesson(await refused(self.rooms.tally, room))

    async def vote_line(self, room: str, voter: str, step: int, piece: int) -> str:
        """One phone's pick of an English piece (its index) for the step it was shown: the line saying what was
        recorded, escaped as the page writes it; a refusal raises the rooms' ClassroomError. The page's phones send
        theirs to ui.room_routes, a REST client to class_vote."""
        return html.escape(await self.rooms.vote(room, voter, step, piece))

    async def vote(self, room: str, voter: str, step: int, piece: int) -> str:
        """class_vote: vote_line, a refusal as a message."""
        return await refused(self.vote_line, room, voter, step, piece)

    async def reveal(self, room: str, key: str) -> dict:
        """class_reveal: the model's α for the step, with the teacher's key; the projector's view."""
        return self.with_lesson(await refused(self.rooms.reveal, room, key))

    async def next_step(self, room: str, key: str) -> dict:
        """class_next: the next step, or after the last the summary, with the teacher's key; the projector's view."""
        return self.with_lesson(await refused(self.rooms.next, room, key))

    @staticmethod
    def with_lesson(view: dict) -> dict:
        """A finished room's view with the line the summary ends on, and the sections it points at."""
        if view["finished"]:
            names = dict(CONTENTS)
            view["lesson"] = {"text": LESSON, "links": [{"href": f"#{section_id(key)}", "text": names[key]}
                                                        for key in LESSON_LINKS]}
        return view

    async def show_room(self, code: str, page: str) -> dict:
        """The teacher's view of the room just opened: its join link and QR code, the projector polling."""
        address, note = class_address(page, self.share.reach) if self.share.reach else (page, "")
        url = join_link(address, code)
        return {self.link: url, self.link_note: note, self.qr: qr_code(url), self.teacher: gr.Column(visible=True),
                self.teacher_timer: gr.Timer(active=True), self.tally_json: await self.tally(code)}

    async def join(self, voter: str, room: str) -> dict:
        """The page as it opens: where its link names a room, the student view of it, polling; otherwise nothing."""
        if not room:
            return {self.voter: voter}
        try:
            state = await self.state(room)
        except gr.Error as error:
            return {self.voter: voter, self.phone_note: f"⚠️ {html.escape(error.message)}", self.student: gr.Column(visible=True),
                    self.opener: gr.Column(visible=False)}
        choices = [(piece, j) for j, piece in enumerate(state["english"])]
        return {self.voter: voter, self.student_room: state["room"], self.step: state["step"],
                self.pick: gr.Radio(choices=choices, value=None), self.state_json: state, self.phone_note: "",
                self.student: gr.Column(visible=True), self.opener: gr.Column(visible=False),
                self.student_timer: gr.Timer(active=True)}

    def render(self, page: gr.Blocks, controls):
        """The section, inside the page's gr.Blocks; controls are the translate section's (its sentence and pickers)."""
        gr.Markdown("## Predict, then reveal")
        with gr.Column() as self.opener:  # what a teacher needs to open a room; a student's phone hides it
            gr.Markdown(EXPLANATION)
            with gr.Row():
                model = gr.Dropdown([(self.models[key].title, key) for key in self.models], value=controls.pickers[0].value,
                                    label="Model for the room (follows the left model above)", scale=2, min_width=240,
                                    elem_id="class-model")
                open_button = gr.Button("Open a room on the sentence above", variant="primary", scale=1, min_width=220,
                                        elem_id="class-open")
        address = gr.Textbox(visible=False)  # the page's address, filled in by the browser
        with gr.Column(visible=False, elem_id="class-teacher") as self.teacher:
            with gr.Row(equal_height=True):
                self.code = code = gr.Textbox(label="Room code", interactive=False, elem_id="class-code", scale=1, min_width=260)
                self.qr = gr.HTML(elem_id="class-qr", min_height=0)
            self.link = gr.Textbox(label="The class joins at", interactive=False, buttons=["copy"], elem_id="class-link")
            self.link_note = gr.Markdown(elem_id="class-link-note", elem_classes=HIDDEN_WHEN_EMPTY)
            self.key = key = gr.Textbox(visible=False)  # the teacher's key: only this page holds it, and never shows it
            with gr.Row():
                reveal = gr.Button("Reveal", variant="primary", elem_id="class-reveal", min_width=160)
                next_step = gr.Button("Next step", elem_id="class-next", min_width=160)
            gr.Markdown(AGREEMENT, elem_id="class-agreement")
            gr.HTML(elem_id=PROJECTOR_ID, min_height=0)
        with gr.Column(visible=False, elem_id="class-student") as self.student:
            self.phone_note = gr.Markdown(elem_id="class-phone-note", elem_classes=HIDDEN_WHEN_EMPTY)
            gr.HTML(elem_id=PHONE_ID, min_height=0)
            gr.Markdown(QUESTION, elem_id="class-question")
            self.pick = gr.Radio([], label="English pieces", show_label=False, elem_id="class-vote")
            voted = gr.Markdown(elem_id="class-voted", elem_classes=HIDDEN_WHEN_EMPTY)
            gr.HTML(elem_id=f"{PHONE_ID}-answer", min_height=0)  # α and the summary, under the buttons
        # what the page keeps: the room's code and the voter's id and step (read by the events, filled by them)
        self.student_room, self.voter, self.step = gr.Textbox(visible=False), gr.Textbox(visible=False), gr.Number(visible=False, precision=0)
        self.tally_json, self.state_json = gr.JSON(visible=False), gr.JSON(visible=False)
        self.teacher_timer, self.student_timer = gr.Timer(POLL_S, active=False), gr.Timer(PHONE_POLL_S, active=False)
        stop = {"fn": lambda: gr.Timer(active=False), "inputs": None, "queue": False, "api_visibility": "private"}

        # the rooms decode nothing but the opening: every other event skips the queue (a class polls every second)
        controls.pickers[0].change(None, controls.pickers[0], model, js="(key) => key", api_name="class_model")
        opened = open_button.click(None, None, address, js=PAGE_ADDRESS, api_name="class_page_address").then(
            self.open_room, [controls.source, model], [code, key], api_name="class_open")
        opened.success(self.show_room, [code, address], [self.link, self.link_note, self.qr, self.teacher,
                                                          self.teacher_timer, self.tally_json],
                       api_visibility="private", queue=False).then(None, self.tally_json, None, js=DRAW_PROJECTOR)
        polled = self.teacher_timer.tick(self.tally, code, self.tally_json, api_name="class_tally", **ROOM_CALLS,
                                         show_progress="hidden")
        polled.then(None, self.tally_json, None, js=DRAW_PROJECTOR)
        polled.failure(outputs=self.teacher_timer, **stop)  # the room closed: stop asking
        for button, handler, name in ((reveal, self.reveal, "class_reveal"), (next_step, self.next_step, "class_next")):
            button.click(handler, [code, key], self.tally_json, api_name=name, **ROOM_CALLS).then(
                None, self.tally_json, None, js=DRAW_PROJECTOR)

        joined = page.load(self.join, [self.voter, self.student_room],
                           [self.voter, self.student_room, self.step, self.pick, self.state_json, self.phone_note,
                            self.student, self.opener, self.student_timer],
                           js=JOIN_JS, api_name="class_join", **ROOM_CALLS)
        followed = [self.state_json, self.step, self.pick]
        joined.then(None, followed, [self.step, self.pick], js=FOLLOW_ON_PHONE)
        # a phone's polls and votes go to the room routes straight from the browser: a lecture hall's fit one core
        self.student_timer.tick(None, [self.student_room, self.state_json], [self.state_json, self.phone_note],
                                js=POLL_ROOM, show_progress="hidden").then(
            None, followed, [self.step, self.pick], js=FOLLOW_ON_PHONE)
        self.pick.input(None, [self.student_room, self.voter, self.step, self.pick], voted, js=SEND_VOTE)
        # the same two calls for a REST client, through Gradio's API
        gr.api(self.state, api_name="class_state", **ROOM_CALLS)
        gr.api(self.vote, api_name="class_vote", **ROOM_CALLS)

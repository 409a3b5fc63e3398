"""A phone's room calls as the page sends them, to the running app's room routes: the same rooms and rules as the
REST API's, and a clear message for anything wrong."""
import json
import urllib.error
import urllib.request

import pytest


def ask(app_url: str, path: str, body=None) -> tuple[int, dict, str]:
    """(status, JSON reply, Cache-Control) of GET path, or of a POST of `body` (bytes as they are, else as JSON)."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(app_url.rstrip("/") + path, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read()), reply.headers.get("Cache-Control")
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read()), refused.headers.get("Cache-Control")


@pytest.mark.slow  # the app, started as a server
def test_a_phones_poll_is_the_rooms_state_and_its_votes_reach_the_projector(app_url, teacher, room):
    code, key = room
    status, reply, cache = ask(app_url, f"/rooms/{code}")
    assert status == 200 and cache == "no-store"
    assert reply["room"] == teacher.predict(code, api_name="/class_state")  # the REST API's view, the same rules
    assert key not in json.dumps(reply)
    voter = "a1" * 16
    status, reply, _ = ask(app_url, f"/rooms/{code}/votes", {"voter": voter, "step": 1, "piece": 2})
    piece = ask(app_url, f"/rooms/{code}")[1]["room"]["english"][2]
    assert (status, reply) == (200, {"line": f"Your vote for step 1: {piece} (tap another piece to change it)."})
    ask(app_url, f"/rooms/{code}/votes", {"voter": voter, "step": 1, "piece": 0})  # changed: replaced, not added
    assert teacher.predict(code, api_name="/class_tally")["counts"][:3] == [1, 0, 0]
    teacher.predict(code, key, api_name="/class_reveal")
    assert ask(app_url, f"/rooms/{code}")[1]["room"]["revealed"] is True


@pytest.mark.slow
@pytest.mark.parametrize("path, body, status, message", [
    ("/rooms/ZZZZZZ", None, 404, "There is no open room"),
    ("/rooms/" + "Z" * 10_000, None, 404, "There is no open room"),
    ("/rooms/{code}/votes", b"{not json", 400, "one JSON object with voter, step and piece"),
    ("/rooms/{code}/votes", ["a", 1, 2], 400, "one JSON object with voter, step and piece"),
    ("/rooms/{code}/votes", {"voter": "a1" * 16, "step": 1}, 400, "one JSON object with voter, step and piece"),
    ("/rooms/{code}/votes", {"voter": "a1" * 16, "step": 1, "piece": 2, "x": "y" * 3000}, 400, "one JSON object"),
    ("/rooms/{code}/votes", {"voter": "<b>forged</b>", "step": 1, "piece": 0}, 400, "voter id is missing or malformed"),
    ("/rooms/{code}/votes", {"voter": "a1" * 16, "step": 2, "piece": 0}, 400, "step"),
    ("/rooms/{code}/votes", {"voter": "a1" * 16, "step": 1, "piece": 999}, 400, "piece"),
    ("/rooms/{code}/votes", {"voter": "a1" * 16, "step": "1; drop", "piece": 0}, 400, "whole number"),
    ("/rooms/{code}/tally", None, 404, "Not a room call"),
])
def test_anything_wrong_gets_a_clear_message_and_leaves_the_room_as_it_was(app_url, teacher, room, path, body, status,
                                                                         message):
    code, _ = room
    got, reply, _ = ask(app_url, path.format(code=code), body)
    assert got == status and message in reply["error"] and "Traceback" not in reply["error"]
    assert "<b>" not in reply["error"]  # what the user sent comes back escaped, as the page writes it
    assert sum(teacher.predict(code, api_name="/class_tally")["counts"]) == 0
    assert ask(app_url, f"/rooms/{code}")[0] == 200  # the app goes on

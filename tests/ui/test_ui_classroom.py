"""Predict, then reveal through the running app's endpoints, called by gradio_client as the page calls them, and by
the light REST client across two app processes sharing one Redis."""
import asyncio
import os
import shutil
import subprocess
import threading
import time
import urllib.request

import pytest
from gradio_client import Client

import app
from attn_demo.classroom.rooms import VOTE_BURST, VOTE_EVERY_S, Room, Rooms
from attn_demo.classroom.stores import READ_AGAIN_S, RedisStore
from benchmarks import rest_load
from benchmarks.server import Server, free_port
from conftest import ROOM_SENTENCE as SENTENCE, ROOT

pytestmark = pytest.mark.slow  # the app, started as a server


def phone(app_url) -> Client:
    return Client(app_url, verbose=False)


def refused(call, *args, api_name: str) -> str:
    """The message a refused call shows (gr.Error's), as a client receives it."""
    with pytest.raises(Exception) as raised:
        call.predict(*args, api_name=api_name)
    assert "Traceback" not in str(raised.value)
    return str(raised.value)


def test_a_room_holds_the_models_greedy_translation_of_the_sentence(shipped, teacher, room):
    code, key = room
    result = shipped.translate.models[app.OPENING_PICKS[0]].translator.translate(SENTENCE)
    state = phone(teacher.src).predict(code, api_name="/class_state")
    assert (state["step"], state["steps"], state["french"]) == (1, len(result.target_tokens), [])
    assert state["english"] == result.source_tokens and state["alpha"] is None and state["revealed"] is False
    assert key not in str(state) and len(code) == 6


def test_votes_reach_the_projector_and_reveal_and_next_need_the_teachers_key(shipped, teacher, room):
    code, key = room
    alice, bob = phone(teacher.src), phone(teacher.src)
    assert "Your vote for step 1" in alice.predict(code, "alice-phone-1", 1, 0, api_name="/class_vote")
    bob.predict(code, "bob-phone-22", 1, 2, api_name="/class_vote")
    bob.predict(code, "bob-phone-22", 1, 0, api_name="/class_vote")  # changed his mind: replaced, not added
    tally = teacher.predict(code, api_name="/class_tally")
    assert tally["counts"][:3] == [2, 0, 0] and sum(tally["counts"]) == 2 and tally["alpha"] is None
    assert "Only the teacher" in refused(bob, code, "guessed-key", api_name="/class_reveal")
    assert "Only the teacher" in refused(bob, code, "guessed-key", api_name="/class_next")
    assert teacher.predict(code, api_name="/class_tally")["revealed"] is False  # nothing changed
    revealed = teacher.predict(code, key, api_name="/class_reveal")
    alpha = shipped.translate.models[app.OPENING_PICKS[0]].translator.translate(SENTENCE).attention[0]
    assert revealed["alpha"] == pytest.approx(alpha.tolist(), abs=1e-4)
    assert revealed["result"]["picked_argmax"] == revealed["counts"][int(alpha.argmax())]
    assert alice.predict(code, api_name="/class_state")["alpha"] == revealed["alpha"]  # the phones see it too
    moved = teacher.predict(code, key, api_name="/class_next")
    assert moved["step"] == 2 and moved["alpha"] is None and len(moved["french"]) == 1
    assert "at step 2, not 1" in refused(alice, code, "alice-phone-1", 1, 3, api_name="/class_vote")


def test_every_bad_vote_is_refused_with_a_message(teacher, room):
    code, _ = room
    student = phone(teacher.src)
    pieces = len(student.predict(code, api_name="/class_state")["english"])
    assert "no open room" in refused(student, "ZZZZZZ", api_name="/class_state")
    assert f"no English piece {pieces}" in refused(student, code, "carol-phone-3", 1, pieces, api_name="/class_vote")
    assert "voter id" in refused(student, code, "<b>me</b>", 1, 0, api_name="/class_vote")
    assert "voter id" in refused(student, code, "x" * 500, 1, 0, api_name="/class_vote")
    started, sent = time.monotonic(), 0
    while True:  # the burst, then one more each VOTE_EVERY_S: a loaded machine's slower calls get a few more through
        try:
            student.predict(code, "dave-phone-4", 1, sent % 2, api_name="/class_vote")  # pieces 0, 1, 0, …
        except Exception as error:
            message = str(error)
            break
        sent += 1
        assert sent <= VOTE_BURST + (time.monotonic() - started) / VOTE_EVERY_S
    assert "Too many votes" in message and "Traceback" not in message
    kept = (sent - 1) % 2  # the last accepted vote stands; the refused one, on the other piece, counts nowhere
    assert teacher.predict(code, api_name="/class_tally")["counts"][:2] == [int(kept == 0), int(kept == 1)]


def test_the_last_next_sums_up_every_step(teacher, room):
    code, key = room
    student = phone(teacher.src)
    steps = student.predict(code, api_name="/class_state")["steps"]
    for step in range(1, steps + 1):
        student.predict(code, f"erin-phone-{step:02d}", step, 0, api_name="/class_vote")  # a phone each: no flood
        teacher.predict(code, key, api_name="/class_next")
    final = student.predict(code, api_name="/class_state")
    assert final["finished"] and len(final["summary"]) == steps and all(s["votes"] == 1 for s in final["summary"])
    assert [s["agreed"] for s in final["summary"]] == [s["argmax"] == 0 for s in final["summary"]]
    assert "</s>" in final["lesson"]["text"] and [link["href"] for link in final["lesson"]["links"]] == [
        "#section-explanation", "#section-alignment"]


def test_a_model_without_attention_or_a_sentence_it_cannot_read_opens_no_room(shipped, teacher):
    baseline = next((model for model in shipped.models if not model.has_attention), None)
    if baseline is not None:
        assert "has no attention" in refused(teacher, SENTENCE, baseline.key, api_name="/class_open")
    assert "not in the list of choices" in refused(teacher, SENTENCE, "<img src=x>", api_name="/class_open")  # Gradio's own
    assert refused(teacher, "我喜欢咖啡", app.OPENING_PICKS[0], api_name="/class_open")



def test_two_app_processes_share_rooms_through_redis_and_one_killed_mid_vote_loses_nothing(redis_url, tmp_path):
    """Two `python app.py` on one Redis: a room opened on one takes votes on both; one killed (SIGKILL) while votes
    arrive and started again finds every vote the room answered, and the teacher's key still works on it."""
    env = {"ATTN_DEMO_ROOMS": redis_url}
    servers = [None, None]
    starting = [threading.Thread(target=lambda i=i: servers.__setitem__(i, Server(ROOT / "app.py", env=env,
                                                                                   log=tmp_path / f"app{i}.log")))
                for i in range(2)]
    for thread in starting:
        thread.start()
    for thread in starting:
        thread.join()
    try:
        first, second = servers
        opened = asyncio.run(rest_load.call(first.url, "class_open", SENTENCE, app.OPENING_PICKS[0]))
        code, key = opened.data

        async def votes_with_a_kill() -> list:
            async def phone(i: int, url: str):
                await asyncio.sleep(i * 0.01)
                return f"phone-{i:05d}", await rest_load.call(url, "class_vote", code, f"phone-{i:05d}", 1, 0)

            async def kill():
                await asyncio.sleep(0.4)
                first.kill()

            replies = await asyncio.gather(*(phone(i, (first, second)[i % 2].url) for i in range(80)), kill())
            return replies[:-1]

        replies = asyncio.run(votes_with_a_kill())
        answered = {voter for voter, reply in replies if reply.status == "ok"}
        assert {voter for voter, reply in replies[1::2]} <= answered  # the second's, every one
        assert any(reply.status != "ok" for _, reply in replies[::2])  # the kill came mid-vote
        kept = Room.from_stored(asyncio.run(RedisStore(redis_url).read(Rooms._code(code), time.time())))
        assert answered <= set(kept.votes) <= {voter for voter, _ in replies}
        servers[0] = restarted = Server(ROOT / "app.py", env=env, log=tmp_path / "app0-again.log")
        tallies = [asyncio.run(rest_load.call(url, "class_tally", code)).data[0] for url in (restarted.url, second.url)]
        assert tallies[0]["counts"] == tallies[1]["counts"] and sum(tallies[0]["counts"]) == len(kept.votes)
        behind_nginx(tmp_path, [restarted, second], code, len(kept.votes))
        assert asyncio.run(rest_load.call(restarted.url, "class_reveal", code, key)).status == "ok"
        time.sleep(READ_AGAIN_S)  # the other process sees the change within this
        assert asyncio.run(rest_load.call(second.url, "class_state", code)).data[0]["revealed"] is True
    finally:
        for server in servers:
            if server and server.process.poll() is None:
                server.stop()


def behind_nginx(folder, servers: list, code: str, votes_before: int):
    """deploy/nginx.conf in front of the two processes: 40 phones, each with a routing cookie of its own, vote through
    its one address (a POST and its event stream's GET on another process would fail), then a REST client with no
    cookie; the page's first answer sets the cookie."""
    if not shutil.which("nginx"):
        if os.environ.get("ATTN_DEMO_REQUIRE_NGINX"):
            pytest.fail("nginx not found (apt-get install nginx-light)")
        return  # the rest of the test stands without it
    port = free_port()
    config = (ROOT / "deploy" / "nginx.conf").read_text().replace("listen 8080", f"listen 127.0.0.1:{port}")
    for default, server in zip(("127.0.0.1:7860", "127.0.0.1:7861"), servers):
        config = config.replace(default, f"127.0.0.1:{server.port}")
    (folder / "nginx.conf").write_text(config)
    nginx = subprocess.Popen(["nginx", "-c", str(folder / "nginx.conf"), "-e", str(folder / "nginx.log"),
                              "-g", f"daemon off; pid {folder / 'nginx.pid'};"])
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(50):
            try:
                page = urllib.request.urlopen(url, timeout=5)
                break
            except OSError:
                time.sleep(0.1)
        assert page.headers["Set-Cookie"].startswith("attn_route=")

        async def phones():
            return await asyncio.gather(*(rest_load.call(url, "class_vote", code, f"nginx-phone-{i:03d}", 1, 1,
                                                         cookie=f"attn_route=phone{i}") for i in range(40)))

        assert all(reply.status == "ok" for reply in asyncio.run(phones()))
        time.sleep(READ_AGAIN_S)  # each process's votes show on the other within this
        tally = asyncio.run(rest_load.call(url, "class_tally", code))
        assert tally.status == "ok" and sum(tally.data[0]["counts"]) == votes_before + 40
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)

import json
import threading
import urllib.request

import gradio as gr
import pytest

from attn_demo.training.toy import MAX_SECONDS
from attn_demo.ui.train_live import TrainLiveSection


def test_train_toy_answers_one_json_object_of_the_run():
    reply = TrainLiveSection().train_toy("reverse", "bahdanau", 0.5, 3)
    assert json.loads(json.dumps(reply)) == reply  # plain JSON for a REST client
    assert reply["settings"]["seed"] == 3 and reply["updates"] >= 10 and reply["loss_curve"][0][0] == 10
    assert list(reply["exact_by_length"]) == [str(n) for n in range(3, 13)]
    assert all(0 <= share <= 1 for share in reply["exact_by_length"].values())


def test_a_class_asking_the_same_run_at_once_gets_one_run(monkeypatch):
    section, runs = TrainLiveSection(), []
    monkeypatch.setattr(section.runs, "compute", lambda settings, seconds: runs.append(settings) or {"updates": 1})
    threads = [threading.Thread(target=section.train_toy, args=("copy", "none", 1, 0)) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(runs) == 1
    section.train_toy("copy", "none", 1, 1)  # another seed: another run
    assert len(runs) == 2


@pytest.mark.parametrize("inputs, message", [
    (("spell", "bahdanau", 1, 0), "no toy task 'spell'"), (("reverse", "transformer", 1, 0), "no attention"),
    (("reverse", "bahdanau", 0, 0), "more than 0"), (("reverse", "bahdanau", MAX_SECONDS + 1, 0), "at most"),
    (("reverse", "bahdanau", "soon", 0), "seconds must be a number"), (("reverse", "bahdanau", float("nan"), 0), "nan"),
    (("reverse", "bahdanau", 1, 1.5), "seed must be a whole number"), (("reverse", "bahdanau", 1, None), "seed"),
])
def test_bad_input_gets_a_clear_message(inputs, message):
    with pytest.raises(gr.Error, match=message):
        TrainLiveSection().train_toy(*inputs)


@pytest.mark.slow  # the app, started as a server
def test_train_toy_is_on_the_running_app_s_rest_api(app_url):
    body = json.dumps({"data": ["reverse", "bahdanau", 1, 0]}).encode()
    post = urllib.request.Request(f"{app_url}gradio_api/call/train_toy", data=body, method="POST",
                                  headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(post, timeout=30) as reply:
        event = json.loads(reply.read())["event_id"]
    with urllib.request.urlopen(f"{app_url}gradio_api/call/train_toy/{event}", timeout=120) as stream:
        lines = stream.read().decode().splitlines()
    assert "event: complete" in lines
    result = json.loads(lines[lines.index("event: complete") + 1].removeprefix("data: "))[0]
    assert result["updates"] >= 10 and set(result["exact_by_length"]) == {str(n) for n in range(3, 13)}

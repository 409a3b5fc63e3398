import asyncio
import itertools
import json
import threading
import urllib.request

import gradio as gr
import pytest

from attn_demo.serving.toy_runs import ToyRuns
from attn_demo.serving.toy_worker import Workshop
from attn_demo.training.toy import MAX_SECONDS
from attn_demo.ui.page import NO_GRID
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

from attn_demo.ui.train_live import LESSON_DEFAULTS, TrainLiveSection, read_lesson, settings_of
from conftest import plotly_figure


def test_train_toy_answers_one_json_object_of_the_run():
    # the workshop in this process: the app's own, a process at the lowest priority, waits for a busy CI's cores
    # (65 s, against about 3 here); it answers the REST API in test_train_toy_is_on_the_running_app_s_rest_api
    reply = TrainLiveSection(ToyRuns(Workshop())).train_toy("reverse", "bahdanau", 0.5, 3)
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
    (("reverse", "bahdanau", 1, 2**64), "seed must be a whole number from 0"), (("reverse", "bahdanau", 1, -1), "from 0"),
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


def frames_of(section, *inputs) -> list:
    async def frames():
        return [frame async for frame in section.watch(*inputs)]
    return asyncio.run(frames())


TINY = ("reverse", "bahdanau", 16, 2, 4, 0, True)  # task, attention, hidden, shortest, longest, seed, beside


def test_train_shows_the_untrained_models_at_once_then_the_lesson_until_it_has_trained():
    section = TrainLiveSection(ToyRuns(Workshop(clock=itertools.count(0.0, 0.1).__next__), frame_seconds=0.15))
    frames = frames_of(section, *TINY, 0.35, False)
    assert frames[0].status.startswith("**Starting:**") and frames[0].loss is None  # at once, before the models are built
    first, last = next(f for f in frames if f.loss is not None), frames[-1]
    assert "0 updates" in first.status and "Bahdanau (additive): **0%**" in first.status
    assert last.status.startswith("**Trained** 40 updates") and "No attention (baseline): **" in last.status
    loss, accuracy = plotly_figure(last.loss), plotly_figure(last.accuracy)
    assert [trace.name for trace in loss.data] == ["Bahdanau (additive)", "No attention (baseline)"]
    assert list(loss.data[0].x) == [10, 20, 30, 40] and list(accuracy.data[1].x) == [2, 3, 4]
    grid = plotly_figure(last.grid)
    assert grid.data[0].z.shape[1] == 5 and grid.layout.yaxis.title.text == "output"  # 4 digits and </s>
    assert last.grid_note == ""


def test_a_model_without_attention_alone_says_it_has_no_grid_and_a_typed_input_steps_through_it():
    section = TrainLiveSection(ToyRuns(Workshop(clock=itertools.count(0.0, 0.1).__next__), frame_seconds=0.15))
    inputs = ("copy", "none", 16, 2, 4, 0, False)
    last = frames_of(section, *inputs, 0.15, False)[-1]
    assert last.grid is None and last.grid_note == NO_GRID
    tried = section.try_input(*inputs, "1234")
    assert [view["title"].split(":")[0] for view in tried.steps["views"]] == ["No attention (baseline)"]
    assert tried.steps["views"][0]["weights"] is None and "Exactly right: **1234**" in tried.message


def test_a_typed_input_before_training_or_that_the_task_cannot_read_is_said_plainly():
    section = TrainLiveSection(ToyRuns(Workshop(), frame_seconds=0.01))
    assert section.try_input(*TINY, "123").message.startswith("Train a model with these settings first")
    section.lessons.leave(section.lessons.join(settings_of(*TINY[:6]), True, 0.0))  # asked for, never built
    assert section.try_input(*TINY, "123").message.startswith("Train a model with these settings first")
    frames_of(section, *TINY, 0.01, False)
    refused = section.try_input(*TINY, "12a!")
    assert refused.steps is None and "reads digits" in refused.message
    tried = section.try_input(*TINY, "321")
    assert len(tried.steps["views"]) == 2 and tried.message.endswith("Exactly right: **123**.")


@pytest.mark.parametrize("inputs, message", [
    (("reverse", "bahdanau", 7, 2, 4, 0, True, 1, False), "hidden size"),
    (("reverse", "bahdanau", 16, 5, 4, 0, True, 1, False), "lengths"),
    (("reverse", "bahdanau", 16, 2, 4, 0.5, True, 1, False), "seed must be a whole number"),
    (("reverse", "bahdanau", 16, 2, 4, 0, True, 0, False), "more than 0"),
])
def test_bad_settings_for_a_lesson_get_a_clear_message(inputs, message):
    with pytest.raises(gr.Error, match=message):
        frames_of(TrainLiveSection(), *inputs)


SHARED = ("copy", "luong-dot", 32, 2, 9, 4242, False, 15)  # a lesson as the controls hold it (LESSON_FIELDS)


def opened(section: TrainLiveSection, url: str) -> list:
    """What the page's controls and status show when it opens at `url`."""
    return section.open_lesson(SimpleNamespace(query_params=dict(parse_qsl(urlsplit(url).query))))


def test_a_lesson_s_link_opens_the_section_on_its_settings_and_seed():
    section = TrainLiveSection(share=SimpleNamespace(reach=None))
    url, note, code = section.share_lesson("http://10.0.0.5:7860/", *SHARED)
    assert url["value"].startswith("http://10.0.0.5:7860/?task=copy&") and url["value"].endswith("#section-train")
    assert note == "" and "<svg" in code["value"]
    *controls, status = opened(section, url["value"])
    assert tuple(controls) == SHARED  # every setting, the seed and the seconds: the same run when Train is pressed
    assert status.startswith("**A shared lesson:** copy, Luong (dot), H = 32, inputs of 2–9 digits, seed 4242.")
    date, *_ = section.share_lesson("http://10.0.0.5:7860/", "date", *SHARED[1:])
    assert opened(section, date["value"])[3:5] == [10, 17]  # a date's own lengths, whatever the sliders held


def test_a_page_without_a_lesson_in_its_link_keeps_its_controls():
    section = TrainLiveSection()
    assert all(update == gr.update() for update in opened(section, "http://x/?q=hello&left=bahdanau-en-fr"))


@pytest.mark.parametrize("query, named", [
    ({"task": "spell"}, "task 'spell' is not one of reverse, copy, sort, date; showing reverse"),
    ({"attention": "<b>x</b>"}, "attention '<b>x</b>' is not one of"),
    ({"hidden": "24"}, "hidden '24' is not a whole number from 16 to 128 in steps of 16"),
    ({"seed": "9" * 40}, "is not a whole number from 0 to 4294967295"),
    ({"seed": "-3"}, "seed '-3'"), ({"seconds": "7.5"}, "seconds '7.5'"), ({"beside": "yes"}, "beside 'yes'"),
    ({"shortest": "9", "longest": "4"}, "shortest length 9 is over its longest 4; showing 3–12"),
])
def test_a_link_s_values_the_controls_cannot_hold_are_named_and_the_defaults_shown(query, named):
    lesson, problems = read_lesson(query)
    assert len(problems) == 1 and named in problems[0]
    assert lesson == LESSON_DEFAULTS
    *_, status = opened(TrainLiveSection(), "http://x/?" + "&".join(f"{k}={v}" for k, v in query.items()))
    assert status.startswith("⚠️") and "<b>" not in status  # escaped: a link is only ever read as text

"""The app's handlers called directly, then the running app called through gradio_client."""
import html
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import gradio as gr
import numpy as np
import pytest
import torch
from gradio_client import Client
from gradio_client.utils import QueueError
from threadpoolctl import threadpool_info

import app
from attn_demo.measures.alignment import alignment_error, argmax_links, sentence_word_attention
from attn_demo.ui import translate
from attn_demo.ui.alignment_check import EXAMPLES, AlignmentCheckSection
from attn_demo.ui.page import CONTENTS, section_id
from benchmarks.server import Server, free_port
from conftest import DEVICE, ROOT, plotly_figure, untyped

SENTENCE = "I don't like coffee."
BAD_INPUTS = ["", "   ", "a" * 5000, "😀😀😀", "我喜欢咖啡", "أنا أحب القهوة", "bell\x07 and \x1b escape"]


@pytest.fixture(scope="module")
def translated(shipped):
    return shipped.translate.translate(SENTENCE, 1, False)


def reply(answer) -> dict:
    """A translation's Reply as an API client receives it."""
    return translate.client_reply(answer.values()[1:])


def test_translate_fills_both_columns_and_the_scrubber(shipped, translated):
    state, shown = translated.state, reply(translated)
    assert shown["status"] == "" and shown["left"]["text"].strip() and shown["right"]["text"].strip()
    assert shown["slider"]["maximum"] == max(2, translate.steps_of(shipped.translate.models.sides(state))) and shown["slider"]["value"] == 1
    assert plotly_figure(shown["left"]["grid"]).data[0].z.shape == state["views"]["left"]["result"].attention.shape
    assert state["picks"] == dict(zip(translate.SIDES, app.OPENING_PICKS))
    for side in translate.SIDES:  # each side names its model and that model's test BLEU, from its card
        metrics = shipped.translate.models.picked(state, side).translator.metrics
        assert f"test BLEU {metrics['bleu']}" in shown[side]["heading"]


def test_trace_file_holds_both_traces_and_is_written_once(shipped, translated, monkeypatch):
    state = translated.state
    path = shipped.translate.trace_file(state)
    trace = json.loads(open(path).read())
    left, right = app.OPENING_PICKS
    assert trace["source"] == SENTENCE and trace["beam_size"] == 1 and trace["models"][right]["text"] == reply(translated)["right"]["text"]
    np.testing.assert_array_equal(np.float32(trace["models"][left]["attention"]), state["views"]["left"]["result"].attention)
    written = os.stat(path).st_mtime_ns
    assert shipped.translate.trace_file(state) == path and os.stat(path).st_mtime_ns == written
    assert shipped.translate.trace_file(None) is None
    monkeypatch.setattr(shipped.translate.models[left], "fingerprint", "other weights")
    assert shipped.translate.trace_file(state) != path  # other weights, other file: a restart never serves stale traces


def test_step_data_holds_every_step_of_both_models_without_retranslating(shipped, translated, monkeypatch):
    state = translated.state
    computed = []  # every model call goes through Model.run
    for model in shipped.models:
        monkeypatch.setattr(model, "run", lambda *args, **kwargs: computed.append(args))
    payload = json.loads(json.dumps(shipped.translate.step_data(state)))  # as the page receives it
    assert computed == []  # the step views re-ran no translation
    assert payload["steps"] == translate.steps_of(shipped.translate.models.sides(state)) and len(payload["views"]) == 2
    for side, sent in zip(translate.SIDES, payload["views"]):
        result, model = state["views"][side]["result"], untyped(sent)
        assert model["title"] == shipped.translate.models.picked(state, side).title and model["source"] == result.source_tokens
        np.testing.assert_array_equal(model["weights"], result.attention)
        np.testing.assert_array_equal(model["contexts"], result.contexts)  # the model's own c_t
        np.testing.assert_array_equal(model["queries"], result.queries)
    assert shipped.translate.step_data(None) is None



def test_the_app_computes_on_one_thread_in_torch_and_in_numpys_blas():
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert torch.get_num_threads() == 1 and blas and set(blas) == {1}

def test_large_text_redraws_the_grids_from_state(shipped, translated):
    grid, *_ = shipped.translate.grids(translated.state, True)
    assert plotly_figure(grid).layout.font.size > plotly_figure(reply(translated)["left"]["grid"]).layout.font.size


def listeners(dependencies: list, trigger: tuple) -> list:
    """The page's listeners of one event, (component id, event name), in the order the browser runs them."""
    return [dep for dep in dependencies if trigger in (tuple(target) for target in dep["targets"])]


def test_the_projector_switch_draws_in_the_browser_before_the_server_redraws_the_figures(shipped):
    """Gradio runs one event's listeners in turn, each to the end of its server call: the switch's one browser-only
    listener comes first, or the page's text grows only once every figure has come back from a busy server."""
    switch = next(block for block in shipped.demo.blocks.values() if getattr(block, "label", None) == "Large text (projector)")
    switched = listeners(shipped.demo.get_config_file()["dependencies"], (switch._id, "change"))
    assert [dep["api_name"] for dep in switched if not dep["backend_fn"]] == ["toggle_large_text"]
    assert switched[0]["api_name"] == "toggle_large_text" and len(switched) > 1  # the grids and charts follow


def test_a_users_translation_cancels_the_pages_opening_before_it_is_sent(shipped):
    """A user who translates or picks before the page has opened wins; Gradio runs one event's listeners in turn, each
    to the end of its server call, so the cancelling comes first: after the user's translation it would let the
    opening write its example over the user's sentence meanwhile."""
    dependencies = shipped.demo.get_config_file()["dependencies"]
    opening = {dep["id"] for dep in dependencies if dep["api_name"] in ("open_page", "open_page_step_data")}
    cancelling = [dep for dep in dependencies if opening & set(dep["cancels"])]
    assert len(cancelling) == 1 and set(cancelling[0]["cancels"]) == opening
    triggers = [tuple(target) for target in cancelling[0]["targets"]]
    assert len(triggers) == 4  # Translate, Enter in the box, and either side's model picked
    for trigger in triggers:
        run = listeners(dependencies, trigger)
        first_server = next(i for i, dep in enumerate(run) if dep["backend_fn"])
        assert run[first_server]["api_name"] in ("translate", "pick_model")
        assert run.index(cancelling[0]) < first_server


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_bad_input_gives_a_message_and_clears_the_page(shipped, text):
    outputs = shipped.translate.translate(text, 1, False)
    shown = reply(outputs)
    assert outputs.state is None and shown["left"]["text"] == "" and shown["left"]["grid"] is None
    assert shown["status"].startswith("⚠️") and "<" not in shown["status"].removeprefix("⚠️")


def test_a_word_the_shipped_models_never_saw_is_named_and_an_example_chip_has_none(shipped):
    status = reply(shipped.translate.translate("We are going to the cinema tomorrow evening.", 1, False))["status"]
    assert status.startswith("ℹ️ Never seen in training: **cinema**.")  # the pairs say "movies"
    assert all(reply(shipped.translate.translate(example, 1, False))["status"] == "" for example in translate.EXAMPLES)


@pytest.mark.parametrize("text, unknown", [("I love crème brûlée.", "'è', 'û'"), ("It's “smart” — isn't it?", "'—'"),
                                           ("<img src=x onerror=alert(1)>", "'<', '=', '(', ')', '>'")])
def test_a_few_unknown_characters_are_translated_and_named_in_a_notice(shipped, text, unknown):
    outputs = shipped.translate.translate(text, 1, False)
    state, shown = outputs.state, reply(outputs)
    assert shown["left"]["text"].strip() and shown["right"]["text"].strip()
    assert "<unk>" in state["views"]["right"]["result"].source_tokens
    assert shown["status"].startswith("ℹ️") and "<" not in shown["status"]  # the markup's characters are shown as text
    assert html.unescape(shown["status"]).split("\n\n")[0].endswith(f"read as <unk>: {unknown}")  # then any unseen words
    assert "&lt;unk&gt;" in plotly_figure(shown["left"]["grid"]).layout.xaxis.ticktext


def test_actions_before_any_translation_do_nothing_harmful(shipped):
    assert shipped.translate.step_data(None) is None
    assert shipped.translate.trace_file(None) is None
    assert all(update == gr.update() for update in shipped.translate.grids(None, True))


def test_header_names_the_device_and_how_many_models(shipped):
    header = app.header_markdown(shipped.models, ())
    # a GPU by its name (what a teacher sees on the card), else the device type: "CPU", "MPS"
    device = torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE.upper()
    assert f"Running on **{device}**" in header
    assert f"{len(shipped.models)} trained models" in header


@pytest.mark.slow
def test_running_app_through_gradio_client_keeps_sessions_apart(app_url):
    alice, bob = Client(app_url, verbose=False), Client(app_url, verbose=False)
    a = translate.client_reply(alice.predict("I don't like coffee.", 1, False, api_name="/translate"))
    b = translate.client_reply(bob.predict("We are going to the cinema tomorrow evening.", 2, False, api_name="/translate"))
    assert a["status"] == "" and a["left"]["text"].strip() and a["right"]["text"].strip() and b["left"]["text"].strip()
    assert a["left"]["text"] != b["left"]["text"]
    # each client's step views and trace file, sent together, are those of its own translation
    (a_steps, a_trace), (b_steps, b_trace) = alice.predict(api_name="/step_data"), bob.predict(api_name="/step_data")
    assert "▁coffee" in a_steps["views"][0]["source"] and json.loads(open(a_trace).read())["source"] == "I don't like coffee."
    assert "▁evening" in b_steps["views"][0]["source"] and "evening" in json.loads(open(b_trace).read())["source"]
    status, *_ = alice.predict("<script>alert(1)</script>", 1, False, api_name="/translate")
    assert status.startswith("ℹ️") and "<" not in status  # translated, its unknown characters named as text
    status, *_ = alice.predict("我喜欢咖啡", 1, False, api_name="/translate")
    assert status.startswith("⚠️")
    assert alice.predict(api_name="/step_data") == (None, None)
    assert bob.predict(api_name="/step_data")[0] == b_steps  # bob's session survived alice's bad input


@pytest.mark.slow
def test_a_rest_call_to_a_name_the_app_lacks_is_a_404_naming_its_endpoints(app_url):
    """Gradio answers it with HTTP 500 and prints a traceback; the app says what it has instead (ui.rest_inputs)."""
    request = urllib.request.Request(f"{app_url}gradio_api/call/sort_digits", b'{"data": ["321"]}',
                                     {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    detail = json.loads(refused.value.read())["detail"]
    assert refused.value.code == 404 and detail.startswith('This app has no endpoint "sort_digits". Its endpoints: ')
    assert {"translate", "step_data", "class_vote"} <= set(detail.split(": ", 1)[1].rstrip(".").split(", "))


def test_repeated_input_is_served_from_the_cache_read_only(shipped, translated, monkeypatch):
    computed = []  # every model call goes through Model.run
    for model in shipped.models:
        monkeypatch.setattr(model, "run", lambda *args, **kwargs: computed.append(args))
    typed = "  " + SENTENCE.replace(" ", "   ").replace("'", "’") + " "  # the same sentence once normalised
    again = shipped.translate.translate(typed, 1, False)
    assert computed == []  # a cached input is not translated again
    assert again.state["views"] == translated.state["views"] and reply(again)["left"]["text"] == reply(translated)["left"]["text"]
    assert again.state["views"]["right"] is translated.state["views"]["right"]
    with pytest.raises(ValueError, match="read-only"):
        again.state["views"]["right"]["result"].attention[0, 0] = 1.0


def test_examples_are_translated_at_start_up_with_the_opening_models(shipped, monkeypatch):
    for key in app.OPENING_PICKS:
        model = shipped.translate.models[key]
        monkeypatch.setattr(model.batcher, "batch_fn", lambda requests: pytest.fail(f"{requests} was not translated at start-up"))
        for example in translate.EXAMPLES:
            assert model.view(example, 1)["result"].text


def test_concurrent_requests_are_batched_and_each_gets_its_own_translation(shipped, monkeypatch):
    sentences = ["I like tea.", "Where is the station?", "She is reading a book.", "We were very tired."]
    picked = [shipped.translate.models[key] for key in app.OPENING_PICKS]
    expected = {s: [m.translator.translate(s).target_tokens for m in picked] for s in sentences}
    batches = []
    for model in picked:
        original = model.batcher.batch_fn
        monkeypatch.setattr(model.batcher, "batch_fn", lambda requests, f=original: batches.append(len(requests)) or f(requests))
        monkeypatch.setattr(model.batcher, "window_s", 0.3)  # wide enough that a slow CI machine still batches
    results = {}
    threads = [threading.Thread(target=lambda s=s: results.__setitem__(s, shipped.translate.translate(s, 1, False))) for s in sentences]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for sentence in sentences:
        views = results[sentence].state["views"]
        assert [views[side]["result"].target_tokens for side in translate.SIDES] == expected[sentence]
    assert sum(batches) == 2 * len(sentences) and len(batches) < 2 * len(sentences)


def test_a_bad_input_does_not_join_a_batch(shipped, monkeypatch):
    for model in shipped.models:
        monkeypatch.setattr(model.batcher, "batch_fn", lambda requests: pytest.fail("a bad input reached the batcher"))
    assert shipped.translate.translate("😀😀😀", 1, False).status.startswith("⚠️")


def join_queue(url: str, fn_index: int, text: str, session: str) -> tuple[int, str]:
    """Submit one translation the way the page does; (HTTP status, Gradio's detail on refusal)."""
    body = json.dumps({"data": [text, 1, False, "pieces", *app.OPENING_PICKS, "", ""], "fn_index": fn_index,
                       "session_hash": session}).encode()
    request = urllib.request.Request(f"{url}gradio_api/queue/join", body, {"Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(request, timeout=30).status, ""
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())["detail"]


@pytest.mark.slow
def test_a_full_queue_refuses_at_once_and_the_app_recovers(shipped, monkeypatch):
    """Every decoding slot busy and the queue full: the next request is refused at once with 503
    (the page shows Gradio's "This application is currently busy. Please try again."), never left
    hanging, and the app answers again once the backlog has drained."""
    release = threading.Event()
    for model in shipped.models:
        original = model.batcher.batch_fn
        monkeypatch.setattr(model.batcher, "batch_fn", lambda requests, f=original: release.wait(120) and f(requests))
    port = free_port()
    shipped.demo.launch(**app.LAUNCH, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        fn_index = next(i for i, fn in shipped.demo.fns.items() if fn.api_name == "translate")
        replies = [join_queue(url, fn_index, f"I have {i} cats.", f"flood-{i}")
                   for i in range(translate.CONCURRENCY + app.QUEUE_SIZE + 20)]
        refused = [detail for status, detail in replies if status == 503]
        assert refused and all("Queue is full" in detail for detail in refused)
        assert {status for status, _ in replies} == {200, 503}
        assert app.QUEUE_SIZE <= sum(status == 200 for status, _ in replies) <= app.QUEUE_SIZE + translate.CONCURRENCY
        release.set()
        answer = translate.client_reply(after_the_backlog(lambda: Client(url, verbose=False).predict(
            "I like tea.", 1, False, api_name="/translate")))
        assert answer["status"] == "" and answer["left"]["text"].strip()
    finally:
        release.set()
        shipped.demo.close()


def after_the_backlog(call, within_s: float = 120):
    """call() once the queue has room again: the backlog of a full queue takes a few seconds to drain,
    and until then a new request is refused as the full one was (the behaviour under test)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return call()
        except QueueError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.slow
def test_an_unreachable_hub_checkpoint_is_left_out_and_the_page_says_so(tmp_path):
    offline = {"ATTN_DEMO_MODELS": "someorg/missing", "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub")}
    server = Server(ROOT / "app.py", log=tmp_path / "app.log", env=offline)
    try:
        page = urllib.request.urlopen(f"{server.url}config", timeout=30).read().decode()
        assert "someorg/missing" in page and "It is left out; the bundled checkpoints are on the page" in page
        answer = translate.client_reply(Client(server.url, verbose=False).predict("I like tea.", 1, False, api_name="/translate"))
        assert answer["status"] == "" and answer["right"]["text"].strip()  # the bundled ones translate
    finally:
        server.stop()


@pytest.mark.slow
def test_a_start_that_nothing_can_rescue_ends_in_one_clear_line(tmp_path):
    env = {**os.environ, "ATTN_DEMO_MODELS": str(tmp_path / "no-such-checkpoint")}
    out = subprocess.run([sys.executable, str(ROOT / "app.py")], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [f"attn-demo cannot start: {str(tmp_path / 'no-such-checkpoint')!r} "
                                               "is neither a checkpoint folder nor a Hub repo id (org/name)"]


def test_alignment_check_scores_a_hansards_sentence_against_its_human_links(shipped):
    section, number = shipped.alignment_check, 22
    gold = section.gold
    assert gold is not None, "the Hansards gold alignments should be in the data home (conftest: ../shared/data)"
    outputs = section.show(number, False, *app.OPENING_PICKS)
    for key, grid, score in zip(app.OPENING_PICKS, outputs[::2], outputs[1::2]):
        alpha, figure = sentence_word_attention(section.models[key].translator, gold.english[number - 1], gold.french[number - 1]), plotly_figure(grid)
        expected = alignment_error([argmax_links(alpha)], [gold.sure[number - 1]], [gold.possible[number - 1]])
        assert f"AER **{expected['aer']:.2f}**" in score
        np.testing.assert_array_equal(figure.data[0].z, alpha)
        assert alpha.shape == (len(gold.french[number - 1]), len(gold.english[number - 1]))
        assert len(figure.layout.shapes) == len(gold.possible[number - 1])  # every human link outlined
    table = section.table_markdown()
    argmax_row = next(row for row in table.splitlines() if row.startswith("| α, `argmax` |"))
    argmax = [m.translator.alignment_scores.get("aer", {}).get("argmax") for m in shipped.models]
    cells = " | ".join("–" if aer is None else f"{aer:.3f}" for aer in argmax)  # "–": a model without α
    assert argmax_row == f"| α, `argmax` | {cells} |"  # the cards' numbers, model by model
    assert [n for _, n in section.sentence_choices()][:len(EXAMPLES)] == list(EXAMPLES)


def test_alignment_check_without_the_gold_data_says_so(shipped, tmp_path):
    section = AlignmentCheckSection(shipped.models, tmp_path)
    with gr.Blocks() as page:
        section.render(gr.Checkbox(), [], [])
    texts = [block.value for block in page.blocks.values() if isinstance(block, gr.Markdown)]
    assert section.gold is None and any("not on this machine" in text for text in texts)
    assert not any(isinstance(block, (gr.Dropdown, gr.Plot)) for block in page.blocks.values())


def test_a_start_without_a_data_home_draws_every_section_and_checks_the_gold_a_deploy_puts_beside_the_app(
        shipped, tmp_path, monkeypatch):
    """As on a fresh Space: no data home at all, then the Hansards where the README's Deploy uploads them (APP_DATA)."""
    gold = Path(os.environ["ATTN_DEMO_DATA"]) / "hansards-wpt03"  # the copy the tests read (conftest)
    monkeypatch.setenv("ATTN_DEMO_DATA", str(tmp_path / "no-data-home"))
    monkeypatch.setattr(app, "APP_DATA", tmp_path / "app" / "data")
    bare = app.build_demo(shipped.models)
    sections = [block.elem_id for block in bare.demo.blocks.values() if (block.elem_id or "").startswith("section-")]
    assert sections == [section_id(key) for key, _ in CONTENTS]
    texts = [block.value or "" for block in bare.demo.blocks.values() if isinstance(block, gr.Markdown)]
    assert bare.alignment_check.gold is None
    assert any("python -m attn_demo.data.datasets fetch hansards-wpt03" in text for text in texts)
    shutil.copytree(gold, app.APP_DATA / "hansards-wpt03")
    space = app.build_demo(shipped.models)
    assert len(space.alignment_check.gold.english) == 447
    assert "AER **" in space.alignment_check.show(22, False, *app.OPENING_PICKS)[1]


def test_why_attention_charts_every_models_length_curve_from_its_card(shipped):
    figure = shipped.why_attention.figure(False)
    lines = {line.name: line for line in plotly_figure(figure).data}
    for model in shipped.models:
        curve = model.translator.length_curve
        assert list(lines[model.title].y) == [v["bleu"] for v in curve.values()]


def test_words_view_draws_the_grids_by_word_with_rows_that_still_sum_to_one(shipped):
    state = shipped.translate.translate("The European Parliament met yesterday.", 1, False, "words").state
    grids = shipped.translate.grids(state, False, "words")[::3]  # each side: grid, note, coverage row
    for grid, side in zip(map(plotly_figure, grids), translate.SIDES):
        result = state["views"][side]["result"]
        assert list(grid.layout.xaxis.ticktext) == ["The", "European", "Parliament", "met", "yesterday.", "&lt;/s&gt;"]
        z = np.asarray(grid.data[0].z)
        assert z.shape == (len(grid.layout.yaxis.ticktext), 6) and len(result.source_tokens) >= 6
        np.testing.assert_allclose(z.sum(1), 1.0, rtol=1e-5)  # float32 α, summed
        assert "by word" in grid.layout.title.text and "(by words)" in grid.data[0].hovertemplate
    coverage = shipped.translate.grids(state, False, "words")[2]  # the coverage row follows: one cell a word
    assert coverage.count('class="coverage-cell"') == 6 and "each English word received" in coverage
    pieces = plotly_figure(shipped.translate.grids(state, False, "pieces")[0])
    assert "by piece" in pieces.layout.title.text and np.asarray(pieces.data[0].z).shape[1] == len(state["views"]["left"]["result"].source_tokens)

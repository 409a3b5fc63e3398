"""A REST call's inputs: missing ones filled in with their documented defaults, the others refused by name, at once."""
import json
import urllib.error
import urllib.request

import gradio as gr
import pytest
from starlette.middleware import Middleware

from attn_demo.ui.rest_inputs import RestInputs, checked_inputs
from benchmarks.server import free_port


def call_me(code: str, text: str, beam: float, large: bool, step: int) -> str:
    return json.dumps([code, text, beam, large, step])


def a_page() -> gr.Blocks:
    """An endpoint with inputs of every JSON kind, with and without defaults, as the page's translate and class_vote."""
    with gr.Blocks() as page:
        code, text = gr.Textbox(), gr.Textbox(value="The red car.")
        beam, large, step = gr.Slider(1, 8, value=1, step=1), gr.Checkbox(value=False), gr.Number(precision=0)
        out = gr.Textbox()
        gr.Button().click(call_me, [code, text, beam, large, step], out, api_name="call_me")
    page.queue()
    return page


@pytest.fixture(scope="module")
def page():
    return a_page()


@pytest.fixture(scope="module")
def parameters(page):
    return page.get_api_info()["named_endpoints"]["/call_me"]["parameters"]


@pytest.mark.parametrize("data, filled", [
    (["ABCDEF", "Hi.", 3, True, 2], ["ABCDEF", "Hi.", 3, True, 2]),  # a whole call, as it came
    (["ABCDEF", None, None, None, 2.0], ["ABCDEF", "The red car.", 1, False, 2.0]),  # null: the default
])
def test_a_call_with_defaults_to_fill_in_goes_on_with_them(parameters, data, filled):
    assert checked_inputs("call_me", parameters, data) == (filled, "")


@pytest.mark.parametrize("data, message", [
    (["ABCDEF"], "call_me is missing step: it takes 5 inputs (code, text, beam, large, step), in that order."),
    ([], "call_me is missing code, step"),
    (["ABCDEF", "Hi.", 3, True, 2, 9], "call_me takes 5 inputs (code, text, beam, large, step), not 6."),
    (["ABCDEF", "Hi.", "x", True, 2], 'beam must be a number, not "x".'),
    (["ABCDEF", "Hi.", True, True, 2], "beam must be a number, not true."),  # JSON's true is no number
    (["ABCDEF", "Hi.", 3, "yes", 2], 'large must be a boolean, not "yes".'),
    (["ABCDEF", "Hi.", 3, True, 1.5], "step must be an integer, not 1.5."),
    ([{"a": 1}, "Hi.", 3, True, 2], 'code must be a string, not {"a": 1}.'),
])
def test_a_call_missing_an_input_or_with_one_of_the_wrong_kind_is_refused_by_name(parameters, data, message):
    filled, error = checked_inputs("call_me", parameters, data)
    assert filled == [] and message in error


def post(url: str, body: dict, name: str = "call_me") -> tuple[int, dict]:
    request = urllib.request.Request(f"{url}gradio_api/call/{name}", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def result(url: str, event_id: str) -> str:
    with urllib.request.urlopen(f"{url}gradio_api/call/call_me/{event_id}", timeout=30) as stream:
        return stream.read().decode()


def test_the_running_app_answers_a_short_call_with_its_defaults_and_a_bad_one_with_a_message(page):
    port = free_port()
    page.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                app_kwargs={"middleware": [Middleware(RestInputs, blocks=page)]})
    url = f"http://127.0.0.1:{port}/"
    try:
        status, reply = post(url, {"data": ["ABCDEF", None, None, None, 4]})
        assert status == 200 and '[\\"ABCDEF\\", \\"The red car.\\", 1, false, 4]' in result(url, reply["event_id"])
        assert post(url, {"data": ["ABCDEF"]}) == (422, {"detail": "call_me is missing step: it takes 5 inputs "
                                                                   "(code, text, beam, large, step), in that order."})
        status, reply = post(url, {"data": "oops"})  # not a call's JSON: FastAPI's own answer, untouched
        assert status == 422 and reply["detail"][0]["loc"] == ["body", "data"]
        assert post(url, {"data": ["reverse", "bahdanau", 30, 0]}, "train_toy") == (  # Gradio's own: 500, a traceback
            404, {"detail": 'This app has no endpoint "train_toy". Its endpoints: call_me.'})
        status, reply = post(url, {"data": []}, "x" * 10_000)
        assert status == 404 and reply["detail"].startswith(f'This app has no endpoint "{"x" * 40}…". Its endpoints')
        assert post(url, {"data": ["ABCDEF", "Hi.", 3, True, 2]})[0] == 200  # the page's own still answered
    finally:
        page.close()

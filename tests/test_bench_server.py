"""benchmarks/server.py's gradio_user waits for a slow answer as a browser does."""
import asyncio
import threading
import time

import gradio as gr
import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from benchmarks.server import WAIT_S, free_port, gradio_user

pytestmark = pytest.mark.slow  # starts a server

SLOW_S = 6  # past httpx's 5 s, well within WAIT_S


@pytest.fixture(scope="module")
def slow_url():
    """An echoing Gradio app whose queue answers each join SLOW_S late, as a loaded machine's can."""
    with gr.Blocks() as demo:
        gr.Textbox().submit(lambda text: text, gr.Textbox(), gr.Textbox(), api_name="echo")
    app = FastAPI()

    @app.middleware("http")
    async def slow_join(request, call_next):
        if request.url.path.endswith("/queue/join"):
            await asyncio.sleep(SLOW_S)
        return await call_next(request)

    app = gr.mount_gradio_app(app, demo, path="/")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline, "the slow app did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True


def test_a_benchmark_user_waits_for_a_join_a_plain_client_gives_up_on(slow_url):
    from gradio_client import Client

    assert SLOW_S < WAIT_S
    assert gradio_user(slow_url).predict("bonjour", api_name="/echo") == "bonjour"
    with pytest.raises(httpx.TimeoutException):
        Client(slow_url, verbose=False, download_files=False).predict("bonjour", api_name="/echo")

"""attn-demo: trained English→French models translate side by side, two at a time, and the page
shows what each one attended to, step by step.

    pip install -r requirements.txt && python app.py

It listens on this computer only (127.0.0.1) unless GRADIO_SERVER_NAME=0.0.0.0 opens it to the network,
and prints where it opens (attn_demo.serving.reach); GRADIO_SHARE=True adds a public link through Gradio's servers.

The models are every checkpoint in checkpoints/ plus the folders or Hub repo ids named in
ATTN_DEMO_MODELS (attn_demo.serving.catalogue); a Hub checkpoint out of reach is left out, and the page
says so. The page opens on OPENING_PICKS where they are there.

This file loads the models and assembles the page (build_demo, from any catalogue of models: the tests
build it from tiny ones); each section lives in attn_demo/ui/.
"""
import html
import os
from dataclasses import dataclass
from pathlib import Path

import gradio as gr
import torch
from starlette.middleware import Middleware
from threadpoolctl import threadpool_limits

from attn_demo.classroom.rooms import MAX_VOTERS, Rooms
from attn_demo.data.datasets import HANSARDS, find
from attn_demo.examples import EXAMPLES
from attn_demo.serving.catalogue import load_models, requested_models
from attn_demo.serving.reach import reach_of, start_text
from attn_demo.translator import device_name
from attn_demo.ui.alignment_check import AlignmentCheckSection
from attn_demo.ui.attribution import AttributionSection
from attn_demo.ui.classroom import ROOM_CONCURRENCY, ClassroomSection
from attn_demo.ui.compare import CompareSection
from attn_demo.ui.explore import ExploreSection
from attn_demo.ui.export import ExportSection
from attn_demo.ui.first_view import FirstView, first_view_html
from attn_demo.ui.learn import LearnSection
from attn_demo.ui.page import CSS, PAGE_JS, THEME, ModelsOnPage, cache_block_configs, contents, section
from attn_demo.ui.quiz import QuizSection
from attn_demo.ui.rest_inputs import RestInputs
from attn_demo.ui.room_routes import RoomRoutes
from attn_demo.ui.share import ShareSection
from attn_demo.ui.student_page import StudentPage
from attn_demo.ui.trace_files import TraceFiles
from attn_demo.ui.train_live import TrainLiveSection
from attn_demo.ui.translate import CONCURRENCY, TranslateSection
from attn_demo.ui.why_attention import WhyAttentionSection

# One intra-op thread: requests decode at small batch sizes, where a second thread costs more in
# synchronisation than it saves, and the other core is left to the web server (BENCHMARKS.md).
torch.set_num_threads(1)
# numpy's BLAS likewise (each translation's PCA of its h_j): on two threads, with the other core busy with a
# class, a 30-piece sentence's projection cost 1.6 ms of CPU instead of 0.4 (BENCHMARKS.md)
threadpool_limits(1, user_api="blas")
# After every queued call Gradio summarises the last 10,000 for its monitoring page, in pandas: under a class's
# load most of a vote's server CPU (BENCHMARKS.md). A summary every 1,000 calls serves a page a person reads.
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
# Data a deployed app carries beside this file, laid out as the data home (attn_demo.data.datasets): a Space has no data
# home of its own, so the README's Deploy uploads the gold alignments that the alignment check reads here.
APP_DATA = Path(__file__).resolve().parent / "data"
OPENING_PICKS = ("bahdanau-en-fr", "luong-en-fr")  # the two models the page opens on, where they are there
# Requests waiting beyond those running; the next one is told the app is busy, at once. Gradio counts every
# queued call, and a REST client's room calls are queued too: 100 translations waiting, and beside them a
# full room's phones voting in the same second (MAX_VOTERS), none refused.
QUEUE_SIZE = 100 + MAX_VOTERS
# How often a waiting call is told its place in the queue. Gradio's default tells every waiting call at every
# start: 300 votes waiting made 45,000 messages, a quarter of the server's CPU (BENCHMARKS.md).
STATUS_EVERY_S = 1.0
# Gradio runs each call of a plain function in a worker thread (40 by default), and a translation
# holds one while it waits for its batch. Without threads to spare, a full class would also stall
# what needs no decoding, queue joins and room calls included (tests/test_app.py).
MAX_THREADS = CONCURRENCY + ROOM_CONCURRENCY + 16
# The projector switch in the browser: the page's text and every step view at the new size. Gradio runs the listeners
# of one event in turn, each to the end of its server call: registered first, this draws at once, before the figures
# that the server redraws for the switch.
TOGGLE_LARGE_TEXT = "(large) => { document.body.classList.toggle('attn-large', large); window.attnSteps.relayoutAll(large); }"


def start() -> tuple[list, list[str], Rooms]:
    """The catalogue, the notices of what was left out and the rooms in the store ATTN_DEMO_ROOMS names; a start
    nothing can rescue ends in one line."""
    try:
        rooms = Rooms()
        models, notices = load_models(requested=requested_models())
    except (OSError, ValueError) as error:
        raise SystemExit(f"attn-demo cannot start: {error}") from None
    for notice in notices:
        print(f"attn-demo: {notice}", flush=True)
    return models, notices, rooms


def opening_picks(models) -> tuple[str, str]:
    """OPENING_PICKS where both are there, otherwise the first two models (or one model twice)."""
    keys = [model.key for model in models]
    if all(key in keys for key in OPENING_PICKS):
        return OPENING_PICKS
    return keys[0], keys[min(1, len(keys) - 1)]


@dataclass
class Page:
    """The assembled page and the sections that answer its requests (the tests call them directly)."""

    demo: gr.Blocks
    models: list
    translate: TranslateSection
    share: ShareSection
    classroom: ClassroomSection
    export: ExportSection
    explore: ExploreSection
    attribution: AttributionSection
    why_attention: WhyAttentionSection
    learn: LearnSection
    alignment_check: AlignmentCheckSection
    compare: CompareSection
    quiz: QuizSection
    train_live: TrainLiveSection
    first_view: str  # the opening example's grids in the HTML the server sends (ui.first_view)


def header_markdown(models, notices) -> str:
    notices = "".join(f"\n\n⚠️ {html.escape(notice)}" for notice in notices)
    device = device_name(models[0].translator.device)
    return (f"# Watch attention translate English into French\n"
            f"Running on **{device}** · {len(models)} trained models to compare, two at a time{notices}")


def build_demo(models, notices=(), rooms: Rooms | None = None) -> Page:
    """The page for this catalogue of models, its queue set and its opening examples translated; its rooms in
    `rooms` (by default the store ATTN_DEMO_ROOMS names)."""
    picks = opening_picks(models)
    on_page, files = ModelsOnPage(models, picks), TraceFiles()
    translate, export, explore = TranslateSection(on_page, files), ExportSection(on_page, files), ExploreSection(on_page)
    share = ShareSection()
    classroom = ClassroomSection(models, share, rooms)
    attribution, why_attention, learn = AttributionSection(on_page), WhyAttentionSection(models), LearnSection(models, picks)
    alignment_check = AlignmentCheckSection(models, find(HANSARDS, APP_DATA))
    compare, quiz, train_live = CompareSection(models), QuizSection(models), TrainLiveSection(share=share)
    with gr.Blocks(title="attn-demo: attention in neural machine translation", delete_cache=(3600, 3600)) as demo:
        with gr.Row():
            with gr.Column(scale=4, min_width=320):  # a phone puts the switch below the title
                gr.Markdown(header_markdown(models, notices), elem_id="header")
            large_text = gr.Checkbox(label="Large text (projector)", value=False, scale=0, min_width=200)
        large_text.change(None, large_text, None, js=TOGGLE_LARGE_TEXT, api_name="toggle_large_text")
        gr.HTML(contents(), elem_id="contents")  # every section one click away, kept at the top of the screen
        with section("translate"):
            controls = translate.render(demo, large_text)
        with section("share"):
            share.render(controls)
            export.render(controls.session, controls.grid_picks)
        with section("classroom"):
            classroom.render(demo, controls)
        with section("explore"):
            explore.render(controls, large_text)
        with section("explanation"):
            attribution.render(controls, large_text)
        with section("why"):
            why_attention.render(large_text, controls)
        with section("learn"):
            learn.render(demo)
        with section("train"):
            train_live.render(demo, large_text)
        with section("alignment"):
            alignment_check.render(large_text, controls.pickers, controls.grid_picks)
        with section("compare"):
            compare.render(large_text)
        with section("quiz"):
            quiz.render(controls.session)
        gr.Markdown("Every figure has a camera button (top right) that saves it as PNG. Models trained on "
                    "[Tatoeba](https://tatoeba.org) pairs from [manythings.org/anki](https://www.manythings.org/anki/) "
                    "(CC-BY 2.0 FR). The alignment check uses the English–French Hansards word alignments of the "
                    "HLT-NAACL 2003 shared task (Mihalcea & Pedersen 2003).")
        train_live.render_api()
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=2, status_update_rate=STATUS_EVERY_S)
    cache_block_configs(demo)  # every new session builds its state from all of the page's blocks
    translate.warm_up()
    train_live.warm_up()
    first_view = first_view_html([(on_page[key], on_page[key].view(EXAMPLES[0], 1)) for key in on_page.opening.values()])
    return Page(demo, models, translate, share, classroom, export, explore, attribution, why_attention, learn,
                alignment_check, compare, quiz, train_live, first_view)


LAUNCH = dict(theme=THEME, css=CSS, js=PAGE_JS, max_threads=MAX_THREADS)


def serve(page: Page):
    """Launch the page, tell the share section where it opens, print that (in place of Gradio's own lines), and wait."""
    page.demo.launch(**LAUNCH, quiet=True, prevent_thread_lock=True,
                     app_kwargs={"middleware": [Middleware(FirstView, first_view=page.first_view),
                                                Middleware(RestInputs, blocks=page.demo),
                                                Middleware(RoomRoutes, section=page.classroom),
                                                Middleware(StudentPage, section=page.classroom)]})
    page.share.reach = reach_of(page.demo.server_name, page.demo.server_port, page.demo.share_url)
    print(start_text(page.share.reach), flush=True)
    page.demo.block_thread()


if __name__ == "__main__":
    serve(build_demo(*start()))

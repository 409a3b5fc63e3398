"""attn-demo: two trained English→French models translate side by side, and the page shows
what each one attended to, step by step.

    pip install -r requirements.txt && python app.py

Environment: ATTN_DEMO_BAHDANAU and ATTN_DEMO_LUONG take a checkpoint folder or a Hub repo id
(default: the checkpoints bundled in checkpoints/). A Hub checkpoint that cannot be fetched or
found in the cache is replaced by the bundled one of the same kind, and the page says so.

This file loads the models and assembles the page; each section lives in attn_demo/ui/.
"""
import html
import os
from pathlib import Path

import gradio as gr
import torch

from attn_demo import load_or_bundled
from attn_demo.ui.alignment_check import AlignmentCheckSection
from attn_demo.ui.quiz import QuizSection
from attn_demo.ui.translate import CONCURRENCY, STEP_VIEWS_CSS, STEP_VIEWS_JS, TranslateSection, model_title
from attn_demo.ui.why_attention import WhyAttentionSection

ROOT = Path(__file__).resolve().parent
# One intra-op thread: requests decode at small batch sizes, where a second thread costs more in
# synchronisation than it saves, and the other core is left to the web server (BENCHMARKS.md).
torch.set_num_threads(1)
BUNDLED = {"bahdanau": ROOT / "checkpoints" / "bahdanau-en-fr", "luong": ROOT / "checkpoints" / "luong-en-fr"}
ENVIRONMENT = {"bahdanau": "ATTN_DEMO_BAHDANAU", "luong": "ATTN_DEMO_LUONG"}
QUEUE_SIZE = 100  # requests waiting beyond those running; the next one is told the app is busy, at once
# Gradio runs each call of a plain function in a worker thread (40 by default), and a translation
# holds one while it waits for its batch. Without threads to spare, a full class would also stall
# what needs no decoding, queue joins included (tests/test_app.py).
MAX_THREADS = CONCURRENCY + 16
CSS = """
body.attn-large .prose, body.attn-large textarea, body.attn-large input, body.attn-large button,
body.attn-large label span { font-size: 1.4rem !important; }
.translation textarea { font-size: 1.25rem !important; }
.katex { font-size: 1.2em; }
body.attn-large .katex { font-size: 1.6em; }
/* grids keep readable cells and labels: a wide one scrolls sideways (a long sentence on a phone) */
.attn-wide { overflow-x: auto; }
""" + STEP_VIEWS_CSS
TOGGLE_LARGE_TEXT = "(large) => { document.body.classList.toggle('attn-large', large); }"


def load_models() -> tuple[dict, list[str]]:
    """Each model the environment asks for, or the bundled one where a Hub checkpoint is out of
    reach, and the notices that say so. Where nothing can stand in, one line and exit."""
    models, notices = {}, []
    for name, bundled in BUNDLED.items():
        try:
            models[name], notice = load_or_bundled(os.environ.get(ENVIRONMENT[name], str(bundled)), bundled)
        except (OSError, ValueError) as error:
            raise SystemExit(f"attn-demo cannot start: {ENVIRONMENT[name]}: {error}") from None
        if notice:
            print(f"attn-demo: {notice}", flush=True)
            notices.append(notice)
    return models, notices


MODELS, LOAD_NOTICES = load_models()
TRANSLATE = TranslateSection(MODELS)
WHY_ATTENTION = WhyAttentionSection(MODELS)
ALIGNMENT_CHECK = AlignmentCheckSection(MODELS)
QUIZ = QuizSection(MODELS)


def device_name() -> str:
    device = next(iter(MODELS.values())).device
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type.upper()


def header_markdown() -> str:
    scores = " · ".join(f"{model_title(t)}: test BLEU {t.metrics.get('bleu', 'n/a')}" for t in MODELS.values())
    notices = "".join(f"\n\n⚠️ {html.escape(notice)}" for notice in LOAD_NOTICES)
    return (f"# Watch attention translate English into French\n"
            f"Running on **{device_name()}** · {scores} (Tatoeba test set, beam 5, sacreBLEU){notices}")


with gr.Blocks(title="attn-demo: attention in neural machine translation", delete_cache=(3600, 3600)) as demo:
    with gr.Row():
        with gr.Column(scale=4, min_width=320):  # a phone puts the switch below the title
            gr.Markdown(header_markdown(), elem_id="header")
        large_text = gr.Checkbox(label="Large text (projector)", value=False, scale=0, min_width=200)
    session = TRANSLATE.render(large_text)
    WHY_ATTENTION.render(large_text)
    ALIGNMENT_CHECK.render(large_text)
    QUIZ.render(session)
    gr.Markdown("Every figure has a camera button (top right) that saves it as PNG. Models trained on "
                "[Tatoeba](https://tatoeba.org) pairs from [manythings.org/anki](https://www.manythings.org/anki/) "
                "(CC-BY 2.0 FR). The alignment check uses the English–French Hansards word alignments of the "
                "HLT-NAACL 2003 shared task (Mihalcea & Pedersen 2003).")
    large_text.change(None, large_text, None, js=TOGGLE_LARGE_TEXT, api_name="toggle_large_text")

demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=2)
TRANSLATE.warm_up()

LAUNCH = dict(theme=gr.themes.Soft(), css=CSS, js=STEP_VIEWS_JS, max_threads=MAX_THREADS)

if __name__ == "__main__":
    demo.launch(**LAUNCH)

"""Where the rest goes, for the classroom load test: the page's translate section as app.py renders
it (the same components, events and outputs), with the two sections that answer each translation
(the explorer and the quiz), translate and the step data answering with what the page answers for
one sentence, computed once at start. A request costs the framework what the page's costs, and
next to no work of ours (the explorer and the quiz answer from the session, as on the page): its
gap to bare_app.py (the framework's floor, echoing a text) is the price of the page's outputs;
app.py's gap to it is our handlers' work. Started by `python -m benchmarks.bench`,
with the models picked on the page in BENCH_PICKS ("LEFT RIGHT")."""
import os

import gradio as gr

from attn_demo.serving.catalogue import load_models
from attn_demo.ui.explore import ExploreSection
from attn_demo.ui.page import ModelsOnPage
from attn_demo.ui.quiz import QuizSection
from attn_demo.ui.trace_files import TraceFiles
from attn_demo.ui.translate import EXAMPLES, TranslateSection


class ReplayedSection(TranslateSection):
    """The translate section, answering every request with the outputs of EXAMPLES[0]."""

    def __init__(self, models: ModelsOnPage):
        super().__init__(models, TraceFiles())
        self.replayed = super().translate(EXAMPLES[0], 1, False)
        self.steps = super().steps_and_trace(self.replayed.state)

    def translate(self, text, beam_size, large, unit="pieces", left=None, right=None, left_grid="", right_grid=""):
        return self.replayed

    def steps_and_trace(self, state):
        return self.steps


MODELS, _ = load_models()
ON_PAGE = ModelsOnPage(MODELS, tuple(os.environ["BENCH_PICKS"].split()))
SECTION = ReplayedSection(ON_PAGE)

with gr.Blocks() as demo:
    large_text = gr.Checkbox(label="Large text")
    controls = SECTION.render(demo, large_text)
    ExploreSection(ON_PAGE).render(controls, large_text)
    QuizSection(MODELS).render(controls.session)

demo.queue(max_size=100, default_concurrency_limit=2)

if __name__ == "__main__":
    demo.launch()

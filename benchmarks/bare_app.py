"""The framework's floor for the classroom load test: a Gradio app with the requests of app.py's
page (translate, then the events a translation sets off: the step data with the trace file, the
explorer forgetting its beam, the quiz's questions; bench_app.AFTER_TRANSLATE), queued or not as
the page's are, whose functions do no work: translate echoes its input as one text (kept in the
session, as the page keeps its translation for the calls that follow), the others return next to
nothing. Started by `python -m benchmarks.bench`."""
import gradio as gr


def translate(text: str, beam_size: float, large: bool, unit: str, left: str, right: str) -> tuple[str, str]:
    return text, text


def steps_and_trace(state: str) -> tuple[dict, None]:
    return {"source": state}, None


def nothing(*states) -> str:
    return ""


with gr.Blocks() as demo:
    session, explored = gr.State(None), gr.State(None)
    source_box = gr.Textbox()
    beam_slider = gr.Slider(1, 8, value=1, step=1)
    large_text = gr.Checkbox()
    unit = gr.Radio(["pieces", "words"], value="pieces")
    pickers = [gr.Textbox(), gr.Textbox()]
    echo, steps, download, forgotten, questions = gr.Textbox(), gr.JSON(), gr.DownloadButton(), gr.Textbox(), gr.Textbox()
    gr.Button().click(translate, [source_box, beam_slider, large_text, unit, *pickers], [session, echo],
                      api_name="translate").then(steps_and_trace, session, [steps, download], api_name="step_data",
                                                 queue=False)
    steps.change(nothing, [session, explored], forgotten, queue=False, api_name="explore_forget")
    session.change(nothing, session, questions, queue=False, api_name="quiz_questions")

demo.queue(max_size=100, default_concurrency_limit=2)

if __name__ == "__main__":
    demo.launch()

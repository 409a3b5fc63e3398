"""The framework's floor for the room load (benchmarks/rest_load.py): a Gradio app with app.py's room endpoints,
queued as app.py's are, whose functions do no work: one room of four pieces, every vote answered, nothing kept."""
import gradio as gr

ROOM = {"english": ["▁the", "▁red", "▁cat", "</s>"], "counts": [0, 0, 0, 0], "revealed": False}


def open_room(sentence: str, model: str) -> tuple[str, str]:
    return "ABCDEF", "key"


def room(code: str) -> dict:
    return ROOM


def vote(code: str, voter: str, step: float, piece: float) -> str:
    return f"Your vote for step {step}"


with gr.Blocks() as demo:
    code, key, text, view = gr.Textbox(), gr.Textbox(), gr.Textbox(), gr.JSON()
    voter, step, piece = gr.Textbox(), gr.Number(precision=0), gr.Number(precision=0)
    gr.Button().click(open_room, [text, text], [code, key], api_name="class_open")
    rooms = {"queue": False, "concurrency_id": "rooms", "concurrency_limit": 8}
    gr.Button().click(room, code, view, api_name="class_state", **rooms)
    gr.Button().click(room, code, view, api_name="class_tally", **rooms)
    gr.Button().click(vote, [code, voter, step, piece], text, api_name="class_vote", **rooms)

demo.queue(max_size=400, default_concurrency_limit=2, status_update_rate=1.0)

if __name__ == "__main__":
    demo.launch()

"""The floor for the classroom load test: a Gradio app with the same endpoint shape as app.py
whose function does no work (it echoes the input). Started by `python -m attn_demo.bench`."""
import gradio as gr


def translate(text: str, beam_size: float, large: bool):
    return text


with gr.Blocks() as demo:
    source_box = gr.Textbox()
    beam_slider = gr.Slider(1, 8, value=1, step=1)
    large_text = gr.Checkbox()
    echo = gr.Textbox()
    gr.Button().click(translate, [source_box, beam_slider, large_text], echo, api_name="translate")

demo.queue(max_size=100, default_concurrency_limit=2)

if __name__ == "__main__":
    demo.launch()

"""A decoder-step scrubber and the step views it drives, bound to one page element: the Python side
of step_views.js's StepGroup. A section renders the scrubber inside its element and puts slots
(step_slot, and network_slot for a network view; heads_slot, self_attention_slot and pick_slot for a
Transformer's heads) beside it; one payload (attn_demo.views.steps.step_payload, one view per slot, in order)
then fills the slots, and every step is drawn in the browser, without asking the server again."""
import json
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

HERE = Path(__file__).parent
# defines window.attnSteps when the page loads; network_view.js adds the network view, drawn with step_views.js's helpers
# and heads_view.js the views of a Transformer's heads
STEP_VIEWS_JS = "() => { (%s)(); (%s)(); (%s)(); }" % tuple((HERE / name).read_text() for name in
                                                             ("step_views.js", "network_view.js", "heads_view.js"))
STEP_VIEWS_CSS = (HERE / "step_views.css").read_text()


def step_slot(elem_id: str) -> gr.HTML:
    """Where step_views.js draws one model's step view."""
    return gr.HTML(elem_id=elem_id, elem_classes="attn-step-slot")


def network_slot(elem_id: str) -> gr.HTML:
    """Where network_view.js draws one model's network view."""
    return gr.HTML(elem_id=elem_id, elem_classes="attn-network-slot")


def heads_slot(elem_id: str) -> gr.HTML:
    """Where heads_view.js draws one model's Layer and Head controls and the cross-attention of its every head."""
    return gr.HTML(elem_id=elem_id, elem_classes="attn-heads-slot")


def self_attention_slot(elem_id: str) -> gr.HTML:
    """Where heads_view.js draws one model's encoder and decoder self-attention for its picked layer and head."""
    return gr.HTML(elem_id=elem_id, elem_classes="attn-self-slot")


def pick_slot(elem_id: str) -> gr.Textbox:
    """Where heads_view.js writes the grid a side's Layer and Head pick, "layer.head" from 1 (views.read_pick), for
    the server's events that draw it; not shown (page CSS)."""
    return gr.Textbox("", label="Layer and head picked", elem_id=elem_id, elem_classes="attn-pick-slot", container=False,
                      max_length=20)


@dataclass(frozen=True)
class StepGroup:
    """The step views inside the element `element_id`: call scrubber() inside that element, then
    load steps into it with the `load` script, (payload, large) => …"""

    element_id: str

    def call(self, method: str) -> str:
        """A browser expression calling this group's StepGroup method, e.g. "show(t)"."""
        return f"window.attnSteps.group({json.dumps(self.element_id)}).{method}"

    @property
    def load(self) -> str:
        return f"(payload, large) => {{ {self.call('load(payload, large)')}; }}"

    def scrubber(self, api_prefix: str = "") -> gr.Slider:
        """◀ slider ▶ and Play, wired to the browser only (no round trip, no server work); returns the slider."""
        with gr.Row(equal_height=True):
            previous_button = gr.Button("◀ Previous step", scale=1)
            slider = gr.Slider(1, 2, value=1, step=1, label="Output step t", scale=4, elem_id=f"{self.element_id}-slider",
                               elem_classes="attn-step-slider")
            next_button = gr.Button("Next step ▶", scale=1, elem_classes="attn-next-step")
            play_button = gr.Button("▶ Play", scale=1, elem_classes="attn-play")
        slider.input(None, slider, None, js=f"(t) => {{ {self.call('show(t)')}; }}", api_name=f"{api_prefix}show_step",
                     trigger_mode="always_last")
        previous_button.click(None, slider, slider, js=f"(t) => {self.call('move(t, -1)')}", api_name=f"{api_prefix}previous_step")
        next_button.click(None, slider, slider, js=f"(t) => {self.call('move(t, +1)')}", api_name=f"{api_prefix}next_step")
        play_button.click(None, slider, slider, js=f"(t) => {self.call('play(t)')}", api_name=f"{api_prefix}play")
        return slider

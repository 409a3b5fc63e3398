import copy
import inspect

import gradio as gr
import pytest
from gradio.state_holder import SessionState

from attn_demo.ui.page import cache_block_configs


def a_page() -> gr.Blocks:
    """Blocks of the kinds the page has: layout, components wrapped by Gradio's metaclass, state."""
    with gr.Blocks() as page:
        with gr.Row():
            with gr.Column():
                gr.Markdown("$e_{tj}$", elem_id="note", visible=False)
                slider = gr.Slider(1, 8, value=3, step=1, label="Beam")
            gr.Plot(show_label=False)
        text = gr.Textbox(label="French")
        gr.State({"text": "le chat"})
        gr.Button("Translate").click(lambda beam: str(beam), slider, text, api_name="translate")
    return page


def test_cached_configs_leave_every_session_config_as_it_was(monkeypatch):
    page = a_page()
    kinds = {type(block) for block in page.blocks.values()}
    for kind in kinds:  # as Gradio has them, whatever another test cached before
        monkeypatch.delattr(kind.__init__, "__signature__", raising=False)
    signatures = {kind: inspect.signature(kind.__init__) for kind in kinds}
    before = SessionState(page).config_values
    cache_block_configs(page)
    assert SessionState(page).config_values == before
    assert all(kind.__init__.__signature__ == signatures[kind] for kind in kinds)
    assert len(kinds) >= 8 and before and all(config["props"] for config in before.values())


def test_a_value_one_session_sets_stays_in_that_session():
    page = a_page()
    cache_block_configs(page)
    slider = next(key for key, block in page.blocks.items() if isinstance(block, gr.Slider))
    first, second = SessionState(page), SessionState(page)
    first._update_value_in_config(slider, 7)  # what Gradio does with an event's output, for that session only
    assert first.config_values[slider]["props"]["value"] == 7
    assert second.config_values[slider]["props"]["value"] == SessionState(page).config_values[slider]["props"]["value"] == 3


def test_a_new_session_reads_each_blocks_entry_as_built_without_computing_it_again(monkeypatch):
    page = a_page()
    cache_block_configs(page)
    before = SessionState(page).config_values
    for block in page.blocks.values():  # what Gradio computes for an entry: none of it may run per session
        monkeypatch.setattr(block, "api_info", lambda: pytest.fail("an entry was computed for a session"), raising=False)
    session = SessionState(page)
    assert session.config_values == before
    assert copy.copy(session.blocks_config).config_for_block.__self__.built is page.default_config.built

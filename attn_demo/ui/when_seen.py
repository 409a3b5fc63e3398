"""Figures a section draws only when a reader first comes near it, so that the page's first view
carries none of them: a watcher element, bound to its own section, whose click fires once."""
from pathlib import Path

import gradio as gr

WHEN_SEEN_CLASS = "attn-when-seen"
RESERVED_CLASS = "attn-reserved"  # a figure's box while it keeps the figure's room (the script adds it)
WHEN_SEEN_JS = (Path(__file__).parent / "when_seen.js").read_text()  # gr.HTML's js_on_load: `element`, `props`, `trigger`
# the watcher takes no room: out of the column's flow (no gap around it), still where the column would have put it;
# a figure's box keeps its room until the figure is drawn (not hidden as an empty plot is, its icon unseen)
WHEN_SEEN_CSS = f""".{WHEN_SEEN_CLASS} {{ position: absolute !important; width: 1px; height: 1px; overflow: hidden; }}
.block.{RESERVED_CLASS} {{ display: block !important; }}
.block.{RESERVED_CLASS} > .empty {{ visibility: hidden; }}
"""


def when_seen(section: str, reserve: dict[str, int]) -> gr.HTML:
    """An invisible element, placed at the top of `section` (directly in its column, which it watches), that
    clicks itself once when any part of the section first comes within a screen of the window (the reader
    scrolls towards it or jumps to a figure deep inside it, or a shared link opens on it): the event the
    section's first figures are drawn on (watcher.click). `reserve`: the height in pixels of
    each figure sure to be drawn then, by element id: its box keeps that room until then."""
    return gr.HTML("", elem_id=f"{section}-when-seen", elem_classes=[WHEN_SEEN_CLASS], js_on_load=WHEN_SEEN_JS,
                   apply_default_css=False, padding=False, container=False, reserve=reserve,
                   reserved_class=RESERVED_CLASS)

"""What the whole page shares and no section owns: its theme, its style rules, its browser scripts, the
contents bar that takes a teacher to any section in one click, the models on the page and the names
every section uses (its two sides, the LaTeX delimiters, what a grid says when a model has no α)."""
import html
import inspect
from pathlib import Path

import gradio as gr
from gradio.blocks import BlocksConfig
from gradio.components.plot import PlotData

from attn_demo.ui.learn import LEARN_CSS, LEARN_JS
from attn_demo.ui.step_group import STEP_VIEWS_CSS, STEP_VIEWS_JS
from attn_demo.ui.when_seen import WHEN_SEEN_CSS
from attn_demo.views.figures import to_json
from attn_demo.views.translation import COVERAGE_CSS

# the page's sections, in order: the key of each (its element id is section_id(key)) and its name in the contents bar
SECTION_PREFIX = "section-"
CONTENTS = (("translate", "Translate"), ("share", "Share"), ("classroom", "Predict, then reveal"),
            ("explore", "Explore the decoding"),
            ("explanation", "Is attention an explanation?"), ("why", "Why attention?"), ("learn", "Watch it learn"),
            ("train", "Train it live"), ("alignment", "Does attention align?"),
            ("compare", "Compare them all"), ("quiz", "Quiz"))

HIDDEN_WHEN_EMPTY = "hidden-when-empty"  # the class of a Markdown block that takes no room while it is empty
SIDES = ("left", "right")  # the page's two columns; each shows the model picked for it
LATEX = [{"left": "$$", "right": "$$", "display": True}, {"left": "$", "right": "$", "display": False}]
NO_GRID = ("**No attention, so no grid.** This model computes no scores $e_{tj}$ and no weights $\\alpha_{tj}$: every "
           "step reads the same fixed vector $c$, whatever French piece it is writing.")
# The Soft theme with the colours it gives text and controls darkened to WCAG AA contrast (4.5:1): its indigo
# labels on light indigo (3.6:1), grey notes (2.5:1) and primary buttons (4.46:1) wash out on a projector
THEME = gr.themes.Soft().set(
    block_title_text_color="*primary_700", block_label_text_color="*primary_700", body_text_color_subdued="*neutral_600",
    input_placeholder_color="*neutral_500", button_primary_background_fill="*primary_600",
    button_primary_background_fill_hover="*primary_700", checkbox_label_background_fill_selected="*primary_600",
)
CSS = """
body.attn-large .prose, body.attn-large textarea, body.attn-large input, body.attn-large button,
body.attn-large label span { font-size: 1.4rem !important; }
body.attn-large .info-text { font-size: 1.15rem !important; }  /* a control's note under its label (Gradio's info=) */
.translation textarea { font-size: 1.25rem !important; }
.katex { font-size: 1.2em; }
body.attn-large .katex { font-size: 1.6em; }
/* grids keep readable cells and labels: a wide one scrolls sideways in its own box (a long sentence on a
   phone); !important over the overflow Gradio writes on each block's style attribute */
.block:has(.js-plotly-plot) { overflow-x: auto !important; }
/* tables break lines between words only, never inside a number: one wider than a phone scrolls sideways */
.prose table { display: block; overflow-x: auto; }
.prose th, .prose td { overflow-wrap: normal; word-break: normal; }
#compare-table td:last-child { min-width: 15em; }  /* "how it was trained" reads as lines, not a word a line */
/* a dropdown's text stops short of its arrow, which Gradio draws over the end of the box: a model's name on a
   phone ends in "…" instead of running under it */
.secondary-wrap input[role="combobox"] { padding-right: 28px !important; text-overflow: ellipsis; }
/* a plot with nothing to show yet is not drawn (Gradio's empty-plot icon reads as a broken image); while its
   event runs it is, for its progress; the section says in words what to press */
.block:has(> .empty[aria-label="Empty value"]):has(> [data-testid="status-tracker"].hide) { display: none; }
/* a note with nothing to say (beside a grid) takes no room */
.%s:has(.md:empty) { display: none; }
/* the contents bar stays at the top of the screen, one line that scrolls sideways on a phone; a section it
   jumps to starts below it. Gradio's container hides its overflow, which would make it the bar's scroller
   and the bar scroll away with it: clip is the same to the eye and lets the bar stick */
.gradio-container { overflow-x: clip !important; overflow-y: visible !important; }
#contents { position: sticky; top: 0; z-index: 100; background: var(--background-fill-primary); padding: 4px 0; }
#contents nav { display: flex; gap: 0.4em 1.2em; overflow-x: auto; white-space: nowrap; font-weight: 600; }
#contents a { color: var(--link-text-color); padding: 6px 0; }
[id^="%s"] { scroll-margin-top: 4rem; }
""" % (HIDDEN_WHEN_EMPTY, SECTION_PREFIX)
HERE = Path(__file__).parent
CSS += STEP_VIEWS_CSS + LEARN_CSS + COVERAGE_CSS + WHEN_SEEN_CSS
CSS += (HERE / "room_tables.css").read_text() + (HERE / "classroom.css").read_text()  # the page's own rules last
CLASSROOM_JS = (HERE / "classroom.js").read_text()  # defines window.attnClassroom: the class activity's views
PAGE_CHANGES_JS = (HERE / "page_changes.js").read_text()  # one observer of the page for the watchers below: () => watch
REACHABLE_JS = (HERE / "reachable.js").read_text()  # (watch) => …: whatever scrolls can be reached by keyboard
FIGURE_TEXT_JS = (HERE / "figure_text.js").read_text()  # (watch) => …: a screen reader reads each figure's text alternative
# A link ending in #section-… (a shared link can) opens on that section. The browser looks for it before
# Gradio has drawn the page, and what is drawn above it later pushes it down: so the page brings it back
# under the contents bar whenever the page's height changes, until the reader scrolls or touches it (or 30 s).
OPEN_ON_SECTION = """() => {
  const id = decodeURIComponent(window.location.hash.slice(1));
  if (!id.startsWith(%r)) return;
  const bring = () => document.getElementById(id)?.scrollIntoView();
  const keep = new ResizeObserver(bring);
  keep.observe(document.body);
  const stop = () => keep.disconnect();
  for (const event of ["wheel", "touchstart", "keydown", "mousedown"]) window.addEventListener(event, stop, { once: true });
  setTimeout(stop, 30000);
}""" % SECTION_PREFIX
PAGE_JS = (f"() => {{ ({STEP_VIEWS_JS})(); ({LEARN_JS})(); ({CLASSROOM_JS})(); const watch = ({PAGE_CHANGES_JS})(); ({REACHABLE_JS})(watch); "
           f"({FIGURE_TEXT_JS})(watch); ({OPEN_ON_SECTION})(); }}")  # run once, when the page loads


def section_id(key: str) -> str:
    """The element id of the section `key` of CONTENTS: what the contents bar and a shared link jump to."""
    return SECTION_PREFIX + key


def section(key: str) -> gr.Column:
    """The column that holds one section of CONTENTS on the page."""
    if key not in dict(CONTENTS):
        raise ValueError(f"{key!r} is not a section of CONTENTS")
    return gr.Column(elem_id=section_id(key))


def contents() -> str:
    """The contents bar: a link to each section of CONTENTS."""
    links = "".join(f'<a href="#{html.escape(section_id(key))}">{html.escape(name)}</a>' for key, name in CONTENTS)
    return f'<nav aria-label="Sections of the page">{links}</nav>'


def cache_block_configs(page: gr.Blocks) -> None:
    """Compute the config of every block on `page` once, when the page is built, not for every new session.

    Gradio builds each new session's state from the config of every block on the page (SessionState, kept
    for deep links), and every REST call without a session is a new session: under a class's load that was
    about 30 ms of server CPU a session on this page of 250 blocks, then still a third of the server's time
    for a vote (BENCHMARKS.md). A block's config is read from its attributes, and the page's blocks never
    change once built (an update makes a new block, for its session only), so every session gets the same
    config: each block hands out a copy of its own (get_config), and the page's BlocksConfig the block's whole
    entry (BuiltConfig), made at build time. The copies are shallow, as Gradio only ever sets a session's
    props, never changes them in place. The blocks' classes keep their constructor signatures
    (inspect.signature, PEP 362's __signature__), computed once too, for the blocks an update makes later."""
    for kind in {type(block) for block in page.blocks.values()}:
        kind.__init__.__signature__ = inspect.signature(kind.__init__)
    for block in page.blocks.values():
        if hasattr(block, "get_config"):
            block.get_config = copies_of(block.get_config())
    config = page.default_config
    config.__class__ = BuiltConfig
    config.built = {key: (block, BlocksConfig.config_for_block(key, [], block)) for key, block in config.blocks.items()}


def copies_of(config: dict):
    """A block's get_config that hands out a new copy of `config` at each call."""
    return lambda cls=None: dict(config)


class BuiltConfig(BlocksConfig):
    """A page's BlocksConfig, and each session's copy of it, handing out the entry of a block as it was built
    (`built`: id → (block, entry)) without computing it again; a block an update made is computed as Gradio does."""

    built: dict = {}

    def config_for_block(self, _id, rendered_ids, block, renderable=None) -> dict:
        kept = self.built.get(_id)
        if renderable is None and kept is not None and kept[0] is block:
            return {**kept[1], "props": dict(kept[1]["props"])}
        return BlocksConfig.config_for_block(_id, rendered_ids, block, renderable)

    def __copy__(self):
        new = super().__copy__()
        new.__class__, new.built = BuiltConfig, self.built
        return new


def plot(figure: dict | None) -> PlotData | None:
    """A figure of attn_demo.views.figures (a plain dict) as gr.Plot's value, written by figures.to_json: given
    the figure itself, gr.Plot would take only a go.Figure, whose building and writing cost 2–3 ms a
    grid, on every translation of a whole class (BENCHMARKS.md)."""
    return None if figure is None else PlotData(type="plotly", plot=to_json(figure))


def grid_values(figure: dict | None) -> tuple:
    """An alignment grid's plot and note as values: the grid, or (a model without attention, figure None)
    no plot and a note saying why. Both stay on the page and an empty one takes no room (CSS above): an
    update that hides one costs Gradio a new component and its config for every request of a class."""
    return (None, NO_GRID) if figure is None else (plot(figure), "")


class ModelsOnPage:
    """The models the page offers (a list of catalogue.Model), by key, and the pair it opens on. Every
    section that shows a model gets them from here; a session's translation (the translate section's
    state) names the key picked on each side and holds each side's view."""

    def __init__(self, models: list, opening: tuple[str, str]):
        self.by_key = {model.key: model for model in models}
        self.opening = dict(zip(SIDES, opening))

    def __getitem__(self, key: str):
        return self.by_key[key]

    def __contains__(self, key: str) -> bool:
        return key in self.by_key

    def __iter__(self):
        return iter(self.by_key.values())

    def choices(self) -> list[tuple[str, str]]:
        """(label, key) of every model, for a picker."""
        return [(f"{model.kind.title} — {key}", key) for key, model in self.by_key.items()]

    def picked(self, state, side: str):
        return self.by_key[state["picks"][side]]

    def sides(self, state) -> list[tuple]:
        """(model, view) of each side of a session's translation, in the order of SIDES (attn_demo.views.translation)."""
        return [(self.picked(state, side), state["views"][side]) for side in SIDES]


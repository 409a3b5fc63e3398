"""The figures below the first screen: none of them in what every page load copies, each drawn by its
section's watcher when a reader comes near (the browser side: tests/ui/test_browser_page.py)."""
import pytest

from attn_demo.ui.page import section_id

# the figures each section draws only when seen, by section key
DRAWN_WHEN_SEEN = {"why": ("length-chart",), "compare": ("compare-chart",), "alignment": ("left-gold-grid", "right-gold-grid")}


def blocks_by_id(demo) -> dict:
    return {block.elem_id: block for block in demo.blocks.values() if getattr(block, "elem_id", None)}


def test_the_page_config_carries_none_of_the_figures_below_the_first_screen(shipped):
    plots = {c["props"].get("elem_id"): c["props"].get("value") for c in shipped.demo.config["components"] if c["type"] == "plot"}
    assert {elem_id: plots[elem_id] for ids in DRAWN_WHEN_SEEN.values() for elem_id in ids} == dict.fromkeys(
        [elem_id for ids in DRAWN_WHEN_SEEN.values() for elem_id in ids])


@pytest.mark.parametrize("section", DRAWN_WHEN_SEEN)
def test_a_sections_watcher_click_draws_its_figures(shipped, section):
    blocks = blocks_by_id(shipped.demo)
    watcher = blocks[f"{section}-when-seen"]
    event = next(fn for fn in shipped.demo.fns.values() if (watcher._id, "click") in [tuple(t[:2]) for t in fn.targets])
    replies = event.fn(*(block.value for block in event.inputs))  # as the page stands when the reader arrives
    replies = replies if isinstance(replies, list) else [replies]
    drawn = {block.elem_id: reply for block, reply in zip(event.outputs, replies)}
    assert all(drawn[elem_id] is not None and drawn[elem_id].plot for elem_id in DRAWN_WHEN_SEEN[section])
    assert not event.queue or section == "alignment"  # from the cards, no queue; the alignment check decodes


def test_each_chart_sure_to_be_drawn_keeps_its_figures_height_until_then(shipped):
    blocks = blocks_by_id(shipped.demo)
    reserved = {section: blocks[f"{section}-when-seen"].props["reserve"] for section in DRAWN_WHEN_SEEN}
    assert reserved["why"] == {"length-chart": shipped.why_attention.chart(False)["layout"]["height"]}
    assert reserved["compare"]["compare-chart"] > 140  # a bar pair for each model
    assert reserved["alignment"] == {}  # its grids' heights depend on the models a link may open on


def test_each_watcher_sits_directly_in_its_sections_column(shipped):
    """The watcher watches the column it sits in (when_seen.js): in a row or a column of its own it would wait
    for a reader to come near that, not near its section."""
    blocks = blocks_by_id(shipped.demo)
    assert {section: blocks[f"{section}-when-seen"].parent.elem_id for section in DRAWN_WHEN_SEEN} == {
        section: section_id(section) for section in DRAWN_WHEN_SEEN}

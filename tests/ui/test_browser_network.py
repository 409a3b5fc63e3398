"""The network view in a real browser: each step lit with the pieces of the model's trace, no label on another."""
import pytest

from attn_demo.ui.translate import EXAMPLES
from test_browser import (
    GROUP, OVERLAP, SCREENSHOT_DIR, first_of_kind, open_app, pick)

pytestmark = pytest.mark.browser


# Pairs of a network view's labels that overlap, and labels that leave their node's box, side by side
# (the hidden h_j cells of a short sentence left out).
NETWORK_OVERLAPS = """(side) => {
    """ + OVERLAP + """
    const svg = document.querySelector(`#${side}-network svg`), problems = [];
    const shown = (e) => !e.closest('[style*="display: none"]') && e.textContent.trim();
    const texts = [...svg.querySelectorAll("text")].filter(shown).map((t) => [t.textContent, t.getBoundingClientRect(), t]);
    texts.forEach(([a, p], i) => texts.slice(i + 1).forEach(([b, q]) => { if (overlap(p, q)) problems.push(`${a} / ${b}`); }));
    for (const [a, p, text] of texts) {
        const box = text.parentElement.querySelector(":scope > rect")?.getBoundingClientRect();
        if (box && (p.left < box.left || p.right > box.right)) problems.push(`${a} leaves its box`);
    }
    return problems;
}"""


# What a side's network view shows: its nodes, the pieces its lit path names and its text alternative.
DRAWN_NETWORK = """(side) => {
    const svg = document.querySelector(`#${side}-network svg`), at = (name) => svg.querySelector(`[data-node="${name}"]`);
    return { nodes: [...svg.querySelectorAll(".attn-net-node")].map((n) => n.dataset.node),
             emitted: at("emitted").dataset.piece, emitted_text: at("emitted").textContent,
             attended: at("softmax")?.dataset.piece, attended_cell: svg.querySelector(".attn-net-best")?.dataset.piece,
             label: svg.getAttribute("aria-label"), role: svg.getAttribute("role"), lit: svg.getAttribute("class"),
             fits: svg.parentElement.scrollWidth <= svg.parentElement.clientWidth || getComputedStyle(svg.parentElement).overflowX === "auto" };
}"""


# Whether each side's network view names the step asked of it ({side: t}).
STEPS_SHOWN = """(shown) => Object.entries(shown).every(([side, t]) =>
    document.querySelector(`#${side}-network svg`)?.getAttribute("aria-label")?.startsWith(`Step ${t}:`))"""


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_the_network_view_lights_each_step_with_the_pieces_of_the_models_trace(shipped, browser, app_url, width, height):
    """Each side's network view follows the step scrubber with no request: its emitted piece and
    most-attended piece are the trace's at every step; the baseline's has no score or softmax; no label
    overlaps another or leaves its box, on a phone too."""
    page = browser.new_page(viewport={"width": width, "height": height}, has_touch=width < 500)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    open_app(page, app_url)
    state = shipped.translate.translate(EXAMPLES[0], 1, False).state
    calls = []
    page.on("request", lambda request: calls.append(request.url) if "/queue/join" in request.url else None)
    page.locator("#translate-steps-slider input[type=range]").focus()
    last = max(len(view["result"].target_tokens) for view in state["views"].values())
    for t in range(2, last + 1):
        page.keyboard.press("ArrowRight")  # the next step, as a student moves it
        shown = {side: min(t, len(view["result"].target_tokens)) for side, view in state["views"].items()}
        # every side at its step: the slider's own Gradio event, a frame later, must find it drawn, not draw another
        page.wait_for_function(STEPS_SHOWN, arg=shown, timeout=30_000)
        for side, view in state["views"].items():
            result = view["result"]
            i = shown[side] - 1
            drawn = page.evaluate(DRAWN_NETWORK, side)
            assert drawn["role"] == "img" and drawn["label"].startswith(f"Step {i + 1}:") and drawn["fits"]
            assert drawn["emitted"] == result.target_tokens[i] and f"writes {result.target_tokens[i]}." in drawn["label"]
            best = result.source_tokens[int(result.attention[i].argmax())]
            assert drawn["attended"] == drawn["attended_cell"] == best and f"on {best};" in drawn["label"]
            assert page.evaluate(NETWORK_OVERLAPS, side) == [], (side, t)
    assert calls == []  # drawn in the browser from the payload it already has
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    # the step's highlight: one box resting on every node in the model's order, moved and faded by transform and
    # opacity alone (the compositor's: the page repaints nothing a frame), and one layer however many nodes
    moving = page.evaluate(f"""() => {{ {GROUP}.show(2); return document.getAnimations()
        .filter((a) => a.effect.target.closest('#left-network'))
        .map((a) => [a.effect.target.className, a.effect.getKeyframes()]); }}""")
    assert [target for target, _ in moving] == ["attn-net-glow"]
    frames = moving[0][1]
    assert {key for frame in frames for key in frame} - {"offset", "computedOffset", "easing", "composite"} == {"transform", "opacity"}
    rests = list(dict.fromkeys(float(frame["transform"].split("translateY(")[1].split("px")[0]) for frame in frames))
    assert rests == sorted(rests) and len(rests) == page.locator("#left-network .attn-net-node").count() > 0
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    page.locator("#left-network").screenshot(path=str(SCREENSHOT_DIR / f"network-{width}.png"))

    baseline = first_of_kind(shipped, "none")
    if baseline is not None:
        pick(page, "left", baseline)
        page.wait_for_function(f"() => {GROUP}.payload?.views[0].weights === null", timeout=60_000)
        drawn = page.evaluate(DRAWN_NETWORK, "left")
        assert "score" not in drawn["nodes"] and "softmax" not in drawn["nodes"] and drawn["attended_cell"] is None
        assert "no score, no softmax" in drawn["label"]
        assert page.locator("#left-network .attn-network-lacks").inner_text().startswith("No attention: no score and no softmax")
        for t in (1, last):
            page.evaluate(f"(t) => {GROUP}.show(t)", t)
            assert page.evaluate(NETWORK_OVERLAPS, "left") == [], t
        page.locator("#left-network").screenshot(path=str(SCREENSHOT_DIR / f"network-baseline-{width}.png"))
    transformer = first_of_kind(shipped, "transformer")
    if transformer is not None:  # its feed-forward written with the φ its config names, as the server sent it
        pick(page, "left", transformer)
        page.wait_for_function(f"() => {GROUP}.payload?.views[0].heads?.activation", timeout=60_000)
        written = page.evaluate(f"() => {GROUP}.payload.views[0].heads.activation")
        assert written == "max(0, " and written in page.locator('#left-network [data-node="feedforward"]').text_content()
    assert errors == []
    page.close()

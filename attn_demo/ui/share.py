"""Share: a link that opens the same view on every phone, and its QR code for a projector.

The link holds what is on screen: the sentence (?q=), the model on each side, the beam size, the
output step and the grid unit, a Transformer's layer and head (left_grid, right_grid, where picked), and the
section it opens on (#section-…, a teacher's link can open
the class on the alignment check or the quiz). Opening it translates that sentence with those
models (from the cache when a room opens it at once) and shows that step. Whatever a link holds is only ever read
as text: each value is checked here, and anything off is named in the page's status, escaped.

A page opened at this computer's own address (127.0.0.1) would share a link no phone can open: the link
holds the app's public or network address instead where it has one (attn_demo.serving.reach), and a line beside
it says why, or how to serve the room.
"""
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import gradio as gr
import segno

from attn_demo.decoding.grids import PICK_KEY
from attn_demo.serving.reach import NETWORK_SWITCH, PUBLIC_SWITCH, Reach, is_loopback
from attn_demo.ui.page import CONTENTS, HIDDEN_WHEN_EMPTY, section_id

LINK_FIELDS = ("q", "left", "right", "beam", "step", "unit")  # the query parameters, in the order links write them
GRID_FIELDS = ("left_grid", "right_grid")  # then a Transformer's layer and head on a side, "2.3" or "2.mean" (views.read_pick)
MAX_BEAM = 8  # the page's beam slider goes to 8
MAX_TEXT = 5000  # the input box's max_length
PAGE_ADDRESS = "() => [window.location.origin + window.location.pathname]"  # the page's own address, from the browser
# the line beside a link from a page opened at this computer's own address, by what the link holds instead
OWN_ADDRESS = "This page is open at this computer's own address, which phones cannot open"
NOTES = {
    "public": f"{OWN_ADDRESS}: the link holds the app's public link, through Gradio's servers.",
    "network": f"{OWN_ADDRESS}: the link holds its address on this network, for phones on the same network.",
    "this computer only": (f"The app listens on this computer only, so phones cannot open this link: start it with "
                           f"`{NETWORK_SWITCH}` for phones on the same network, or `{PUBLIC_SWITCH}` for a public link."),
    "no network": f"{OWN_ADDRESS}, and the app found no network address when it started: start it with `{PUBLIC_SWITCH}`.",
}


def read_link(params: dict, defaults: dict, keys: list[str], units: tuple[str, ...]) -> tuple[dict, list[str]]:
    """The view a link asks for ({"q", "left", "right", "beam", "step", "unit"}), each value checked
    (the models against keys, the unit against units), with the defaults for what is missing or off,
    and a line for each value that was off (plain text: the caller escapes it)."""
    view, problems = dict(defaults), []
    if "q" in params:
        view["q"] = str(params["q"])[:MAX_TEXT]
    for side in ("left", "right"):
        if side in params and params[side] in keys:
            view[side] = params[side]
        elif side in params:
            problems.append(f"The link's {side} model {params[side][:80]!r} is not served here; showing {defaults[side]}.")
    for name, top in (("beam", MAX_BEAM), ("step", None)):
        if name in params:
            value = params[name]
            if value.isdigit() and 1 <= int(value) <= (top or int(value)):
                view[name] = int(value)
            else:
                problems.append(f"The link's {name} {value[:20]!r} is not a whole number from 1{f' to {top}' if top else ' up'}.")
    if "unit" in params:
        if params["unit"] in units:
            view["unit"] = params["unit"]
        else:
            problems.append(f"The link's unit {params['unit'][:20]!r} is neither of {', '.join(units)}.")
    for name in GRID_FIELDS:
        if name in params:
            if PICK_KEY.fullmatch(params[name]):
                view[name] = params[name]
            else:
                problems.append(f"The link's {name.replace('_', ' ')} {params[name][:20]!r} is not a layer and head "
                                "such as 2.3 or 2.mean.")
    return view, problems


def class_address(page: str, reach: Reach) -> tuple[str, str]:
    """The address a shared link holds for the page at `page` (its origin and path, as the browser has it), and
    the line for beside the link ("" where it is the page's own and others can open it). A page opened at an
    address others can open is linked there; one opened at this computer's own (127.0.0.1, localhost, ::1) at
    the app's public link, else at its network address, where it has them."""
    opened = urlsplit(page)
    if not is_loopback(opened.hostname or ""):
        return page, ""
    if reach.public or reach.network:
        served = urlsplit(reach.public or reach.network)
        return urlunsplit(served._replace(path=opened.path)), NOTES["public" if reach.public else "network"]
    return page, NOTES["this computer only" if reach.this_computer_only else "no network"]


def link(address: str, q: str, left: str, right: str, beam, step, unit: str, section: str = CONTENTS[0][0],
         left_grid: str = "", right_grid: str = "") -> str:
    """The page's address with the view as query parameters (spaces as %20, as browsers write them), a side's
    layer and head where one is picked, and the section to open on as the fragment where it is not the first."""
    values = dict(zip(LINK_FIELDS, (q, left, right, int(beam), int(step), unit)))
    values.update((name, grid) for name, grid in zip(GRID_FIELDS, (left_grid, right_grid)) if PICK_KEY.fullmatch(grid or ""))
    fragment = f"#{quote(section_id(section))}" if section != CONTENTS[0][0] else ""
    return f"{address}?{urlencode(values, quote_via=quote)}{fragment}"


def qr_code(url: str) -> str:
    """The link as an inline SVG QR code, large enough to scan from the back of a room on a projector;
    a link too long for a QR code (a very long sentence) gets a line saying so instead."""
    try:
        code = segno.make(url, error="m", micro=False)
    except segno.DataOverflowError:
        return "<p>This sentence is too long for a QR code; the link above still works.</p>"
    return code.svg_inline(scale=8, border=4, dark="#000", light="#fff", title="QR code of the link")


class ShareSection:
    def __init__(self, reach: Reach | None = None):
        self.reach = reach  # where the app opens, once it listens (app.py); None: links hold the page's own address

    def share(self, page: str, section: str, q: str, beam, unit: str, left: str, right: str, step, left_grid: str = "",
              right_grid: str = "") -> list:
        address, note = class_address(page, self.reach) if self.reach else (page, "")
        url = link(address, q, left, right, beam, step, unit, section if section in dict(CONTENTS) else CONTENTS[0][0],
                   left_grid, right_grid)
        return [gr.update(value=url, visible=True), note, gr.update(value=qr_code(url), visible=True)]

    def render(self, controls):
        """A Share button under the translate section's input; controls are that section's."""
        with gr.Row():
            button = gr.Button("Share this view: link and QR code", elem_id="share", scale=0, min_width=260)
            section = gr.Dropdown([(name, key) for key, name in CONTENTS], value=CONTENTS[0][0], label="The link opens on",
                                  elem_id="share-section", scale=0, min_width=260)
            address = gr.Textbox(visible=False)  # the page's address, filled in by the browser
        url = gr.Textbox(label="Link to this view", visible=False, interactive=False, buttons=["copy"], elem_id="share-link")
        note = gr.Markdown(elem_id="share-note", elem_classes=HIDDEN_WHEN_EMPTY)  # why the link is not the page's address
        code = gr.HTML(visible=False, elem_id="share-qr")
        button.click(None, None, address, js=PAGE_ADDRESS, api_name="page_address").then(
            self.share, [address, section, controls.source, controls.beam, controls.unit, *controls.pickers, controls.step,
                         *controls.grid_picks],
            [url, note, code],
            api_name="share")

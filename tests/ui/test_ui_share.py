"""Share links: what a link may hold, how it is read back, the address it holds, and its QR code."""
import io
from urllib.parse import parse_qs, urlsplit

import pytest
import segno
import zxingcpp
from PIL import Image

from attn_demo.serving.reach import NETWORK_SWITCH, is_loopback, reach_of
from attn_demo.ui.page import CONTENTS
from attn_demo.ui.share import GRID_FIELDS, LINK_FIELDS, NOTES, ShareSection, class_address, link, qr_code, read_link
from attn_demo.ui.translate import EXAMPLES, UNITS

PICKS = {"left": "bahdanau-en-fr", "right": "luong-en-fr"}
ON_THIS_COMPUTER = ("http://127.0.0.1:7860/", "http://localhost:7860/", "http://[::1]:7860/")
KEYS = ["bahdanau-en-fr", "luong-en-fr", "no-attention-en-fr"]
DEFAULTS = {"q": EXAMPLES[0], **PICKS, "beam": 1, "step": 1, "unit": "pieces"}  # what TranslateSection.open_link passes


def read(params):
    return read_link(params, DEFAULTS, KEYS, UNITS)


def test_a_link_written_then_read_gives_back_the_same_view():
    url = link("http://127.0.0.1:7860/", "The cat's “sofa” & <b>", "no-attention-en-fr", "luong-en-fr", 3, 7, "words")
    params = {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
    assert list(params) == list(LINK_FIELDS) and "%20" in url and "+" not in url  # spaces as browsers write them
    view, problems = read(params)
    assert view == {"q": "The cat's “sofa” & <b>", "left": "no-attention-en-fr", "right": "luong-en-fr", "beam": 3, "step": 7,
                    "unit": "words"} and problems == []


def test_a_link_opens_on_its_section_and_the_first_section_needs_no_fragment():
    view = ("http://127.0.0.1:7860/", "I don't like coffee.", "bahdanau-en-fr", "luong-en-fr", 1, 2, "pieces")
    assert link(*view, "quiz").endswith("&unit=pieces#section-quiz") and urlsplit(link(*view, "quiz")).fragment == "section-quiz"
    assert link(*view, CONTENTS[0][0]) == link(*view) and "#" not in link(*view)
    address, q, left, right, beam, step, unit = view
    shared = [ShareSection().share(address, key, q, beam, unit, left, right, step)[0]["value"] for key in ("alignment", "<b>")]
    assert shared == [link(*view, "alignment"), link(*view)]  # a section the page does not have: the first


def test_a_page_without_a_link_opens_on_the_first_example():
    assert read({}) == (DEFAULTS, [])


@pytest.mark.parametrize("params, field", [({"left": "<img src=x onerror=alert(1)>"}, "left"), ({"beam": "99"}, "beam"),
                                           ({"beam": "-1"}, "beam"), ({"step": "0"}, "step"), ({"step": "1e9"}, "step"),
                                           ({"unit": "javascript:alert(1)"}, "unit"), ({"left_grid": "2"}, "left grid"),
                                           ({"right_grid": "2.3<b>"}, "right grid"), ({"right_grid": "9" * 5000}, "right grid")])
def test_values_that_are_off_fall_back_to_the_defaults_and_are_named(params, field):
    view, problems = read(params)
    defaults = {**read({})[0], "left grid": None, "right grid": None}
    assert view.get(field) == defaults[field] and len(problems) == 1 and f"link's {field}" in problems[0]
    assert len(problems[0]) < 200  # a forged value is named, cut short


def test_a_very_long_sentence_is_cut_to_what_the_input_box_takes():
    assert len(read({"q": "a" * 9000})[0]["q"]) == 5000


def test_the_qr_code_decodes_to_the_link():
    url = link("https://example.org/space/", "I don't like coffee.", "bahdanau-en-fr", "luong-en-fr", 1, 2, "pieces")
    assert "<svg" in qr_code(url)
    png = io.BytesIO()
    segno.make(url, error="m", micro=False).save(png, kind="png", scale=8, border=4)  # the code qr_code draws, as pixels
    assert [result.text for result in zxingcpp.read_barcodes(Image.open(png))] == [url]
    assert "too long for a QR code" in qr_code("https://example.org/?q=" + "x" * 5000)


@pytest.mark.parametrize("page", ON_THIS_COMPUTER)
def test_a_page_opened_on_this_computer_links_the_network_address_the_app_serves(page):
    address, note = class_address(page, reach_of("0.0.0.0", 7860, lan=lambda: "192.168.1.23"))
    assert not is_loopback(urlsplit(address).hostname) and address == "http://192.168.1.23:7860/"
    assert note == NOTES["network"]


@pytest.mark.parametrize("page", ["http://192.168.1.23:7860/", "https://owner-attn-demo.hf.space/", "http://teacher.local:7860/"])
def test_a_page_opened_at_a_network_address_links_its_own(page):
    served = reach_of("0.0.0.0", 7860, "https://0123abcd.gradio.live", lan=lambda: "192.168.1.23")
    assert class_address(page, served) == (page, "")


def test_with_a_share_link_a_page_opened_on_this_computer_links_it():
    address, note = class_address("http://127.0.0.1:7860/", reach_of("127.0.0.1", 7860, "https://0123abcd.gradio.live"))
    assert (address, note) == ("https://0123abcd.gradio.live/", NOTES["public"])


def test_on_this_computer_only_the_link_stays_and_says_how_to_serve_the_room():
    address, note = class_address("http://127.0.0.1:7860/", reach_of("127.0.0.1", 7860))
    assert address == "http://127.0.0.1:7860/" and NETWORK_SWITCH in note
    assert class_address("http://localhost:7860/", reach_of("0.0.0.0", 7860, lan=lambda: None)) == ("http://localhost:7860/",
                                                                                                  NOTES["no network"])


def test_the_share_button_gives_the_network_link_its_qr_code_and_why():
    view = ("I don't like coffee.", 1, "pieces", "bahdanau-en-fr", "luong-en-fr", 2)
    section = ShareSection(reach_of("0.0.0.0", 7860, lan=lambda: "192.168.1.23"))
    url, note, code = section.share("http://127.0.0.1:7860/", "quiz", *view)
    q, beam, unit, left, right, step = view
    assert url["value"] == link("http://192.168.1.23:7860/", q, left, right, beam, step, unit, "quiz")
    assert code["value"] == qr_code(url["value"]) and note == NOTES["network"]
    assert ShareSection().share("http://127.0.0.1:7860/", "quiz", *view)[1] == ""  # not launched by app.py: the page's own


def test_a_link_carries_a_transformers_layer_and_head_where_one_is_picked():
    view = ("http://127.0.0.1:7860/", "I see.", "bahdanau-en-fr", "luong-en-fr", 1, 2, "pieces", "quiz")
    url = link(*view, "", "2.mean")
    params = {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
    assert list(params) == [*LINK_FIELDS, GRID_FIELDS[1]] and params["right_grid"] == "2.mean"
    assert read(params)[0]["right_grid"] == "2.mean" and "left_grid" not in read(params)[0]
    assert link(*view, "", "") == link(*view) and "grid" not in link(*view)  # a GRU model's link as it always was
    assert ShareSection().share(*view[:1], "quiz", *view[1:2], 1, "pieces", *view[2:4], 2, "1.3", "")[0]["value"] == \
        link(*view, "1.3", "")

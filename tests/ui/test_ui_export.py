"""The exported HTML file: both sides, and no text of the user's can close its script."""
import pytest

from attn_demo.ui.export import ExportSection


@pytest.mark.parametrize("attention", ["bahdanau", "none", "transformer"])
def test_the_html_export_holds_both_sides_and_no_text_can_close_its_script(section, attention):
    hostile = "I see the red cat </script><img src=x onerror=alert(1)> <!--"
    state = section.translate(hostile, 1, False, "pieces", f"tiny-{attention}", "tiny-luong-general").state
    path = ExportSection(section.models, section.files).export(state)["value"]
    text = open(path, encoding="utf-8").read()
    assert text.count("</script>") == text.count("<script>") == 2 and "<img src=x" not in text  # escaped or JSON-encoded
    assert f"<h2>{section.models['tiny-luong-general'].title}</h2>" in text and "&lt;img src=x" in text  # shown as text
    assert ("No attention, so no grid." in text) == (attention == "none")
    assert ExportSection(section.models, section.files).export(None)["visible"] is False


def test_a_transformers_export_shows_the_layer_and_head_picked_on_the_page(section):
    state = section.translate("I see the red cat.", 1, False, "pieces", "tiny-transformer", "tiny-bahdanau").state
    export = ExportSection(section.models, section.files)
    picked, shown = export.export(state, "2.3", "")["value"], export.export(state)["value"]
    text = open(picked, encoding="utf-8").read()
    assert picked != shown  # one file per layer and head
    assert 'id="left-grid-pick"><input type="hidden" value="2.3">' in text  # the step views' pick
    assert 'data-pick="2.3"><p class="grid-note"><strong>Layer 2, head 3</strong>, picked' in text  # its note shown
    assert "layer 2, head 3" in text  # the grid's own title
    assert '<input type="hidden" value="">' in open(shown, encoding="utf-8").read()

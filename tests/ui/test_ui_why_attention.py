"""Why attention?: the baseline beside an attention model on a long sentence, and the note read from the cards."""
from attn_demo.ui.why_attention import WhyAttentionSection


def test_why_attention_puts_the_baseline_beside_an_attention_model_on_a_long_sentence(models):
    why = WhyAttentionSection(models)
    text, left, right = why.compare_long()
    assert (left, right) == ("tiny-none", "tiny-bahdanau") and 41 <= len(text.split()) <= 50
    assert WhyAttentionSection([m for m in models if m.has_attention]).pair is None  # no baseline: no button



def test_the_baseline_note_reads_the_fall_of_each_line_from_the_cards(models, monkeypatch):
    curves = {"tiny-none": (25.0, 5.0), "tiny-bahdanau": (40.0, 38.0), "tiny-luong-general": (36.0, 36.0)}
    for model in models:
        short, long = curves.get(model.key, (None, None))
        curve = {"1-10": {"bleu": short}, "41-50": {"bleu": long}} if short else {}
        monkeypatch.setattr(model.translator, "length_curve", curve)
    note = WhyAttentionSection(models).baseline_note()
    assert "keeps 20% of its BLEU at 1–10 words (25.0 → 5.0)" in note and "keep 95%–100% of theirs" in note
    assert "(25.0 against 36.0–40.0 BLEU at 1–10 words)" in note
    assert WhyAttentionSection([m for m in models if m.key != "tiny-none"]).baseline_note() == ""  # no baseline: nothing said

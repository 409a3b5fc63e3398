"""The page, one module per section; the only part of the package that imports gradio.

    translate.py      translate with both models and scrub through the decoder steps
    step_views.js     draws the decoder steps in the browser (translate.py's scrubber; its style in step_views.css)
    why_attention.py  why attention exists: BLEU by sentence length, model by model
    alignment_check.py   does attention align words? the human links of the Hansards on each model's α
    quiz.py           check your understanding: questions on attention and on the user's translation
"""

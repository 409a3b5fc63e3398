"""The page, one module per section; the only part of the package that imports gradio. No section
names a model: each works on the catalogue it is given (attn_demo.serving.catalogue) and reads what it says
about a model from its attention type's description (attn_demo.models.attention.KINDS).

    page.py           what the whole page shares: its theme, style rules and browser scripts (page_changes.js, the one
                      observer of the page for reachable.js and figure_text.js: each figure's text alternative), the
                      models on the page (ModelsOnPage) and the names every section uses
    first_view.py     the opening grids in the HTML the server sends, for a phone still loading the page's scripts
    trace_files.py    the download folder: trace files and exported pages, written once, removed after an hour
    translate.py      translate with the models picked for the two sides and scrub through the decoder steps
    step_views.js     draws the decoder steps in the browser (translate.py's scrubber; its style in step_views.css)
    network_view.js   draws each model as a diagram of one step, lit in the order it computes (the same scrubber)
    why_attention.py  why attention exists: BLEU by sentence length, model by model, and the baseline beside attention
    learn.py          watch it learn: α and the translation through training, from each model's timeline (learn.js)
    alignment_check.py   does attention align words? the human links of the Hansards on each picked model's α
    compare.py        compare them all: every model's scores, speed, size and training in one table and chart
    quiz.py           check your understanding: questions on attention and on the user's translation
    explore.py        explore the decoding: the beam search laid open, and what if another piece, or attention moved
    attribution.py    is attention an explanation? gradient attribution beside α
    share.py, export.py   a link and QR code of the view on screen; the translation as one offline HTML file
    classroom.py      predict, then reveal: a class votes on which English piece the model looks at (rooms in
                      attn_demo.classroom.rooms; drawn by classroom.js, styled by classroom.css and room_tables.css)
    student_page.py   a room's own page for a student's phone (join/CODE): the room alone, plain HTML with
                      classroom.js, student_page.js and student_page.css inline
    train_live.py     train attention live: the REST API's train_toy (a toy task trained on the server, training.toy)
    room_routes.py, rest_inputs.py   a phone's poll and vote as plain HTTP; REST calls' inputs checked, unknown names 404
"""

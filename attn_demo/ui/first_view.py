"""The page's first view in the HTML the server sends: what the page opens on (the first example, translated
by the two opening models, with their alignment grids as plain SVG), shown while a phone is still loading
the page's scripts, and taken away once the page has drawn its own grids.

A visitor with a link (a query string) opens another view, so gets the page alone."""
import html
from attn_demo.examples import EXAMPLES
from attn_demo.ui.page import NO_GRID, SIDES
from attn_demo.views.figures import grid_svg
from attn_demo.views.translation import grid_figure

STYLE = """<style>
#first-view { position: fixed; inset: 0; z-index: 1000; overflow: auto; background: #fff; color: #222;
              font-family: system-ui, sans-serif; padding: 12px 16px; }
#first-view h1 { font-size: 1.3rem; margin: 0 0 4px; } #first-view h2 { font-size: 1.1rem; margin: 12px 0 4px; }
#first-view .sides { display: flex; flex-wrap: wrap; gap: 16px; } #first-view .side { flex: 1 1 340px; min-width: 0; }
#first-view .grid { overflow-x: auto; } #first-view .french { font-size: 1.15rem; margin: 4px 0 8px; }
</style>"""
# Gone once the page has drawn its own first grid (or said why a side has none), or 60 s after its scripts ran.
TAKE_AWAY = """<script>(() => {
  const ready = () => document.querySelector("gradio-app #left-grid .js-plotly-plot") ||
                      document.querySelector("gradio-app #left-grid-note")?.textContent.trim();
  const started = Date.now(), timer = setInterval(() => {
    if (ready() || Date.now() - started > 60000) { document.getElementById("first-view")?.remove(); clearInterval(timer); }
  }, 200);
})();</script>"""


def first_view_html(sides: list[tuple]) -> str:
    """The first view for the opening sides (model, view) of EXAMPLES[0], in the order of SIDES."""
    columns = "".join(_side(side, model, view) for side, (model, view) in zip(SIDES, sides))
    return (f'<div id="first-view" aria-busy="true">{STYLE}<h1>Watch attention translate English into French</h1>'
            f"<p>{html.escape(EXAMPLES[0])}</p><p><em>Loading the interactive page…</em></p>"
            f"<div class=\"sides\">{columns}</div>{TAKE_AWAY}</div>")


def _side(side: str, model, view) -> str:
    figure = grid_figure(model, view, False)
    grid = grid_svg(figure) if figure else f"<p>{html.escape(NO_GRID.replace('**', '').replace('$', ''))}</p>"
    return (f'<section class="side"><h2>{html.escape(model.title)}</h2>'
            f'<p class="french" lang="fr">{html.escape(view["result"].text)}</p>'
            f'<div class="grid" id="{side}-grid">{grid}</div></section>')


class FirstView:
    """ASGI middleware: the page's HTML (GET / without a query string) with the first view put in right
    after its <body>; everything else passes through untouched."""

    def __init__(self, app, first_view: str):
        self.app, self.first_view = app, first_view.encode("utf-8")

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != "/" or scope.get("query_string"):
            return await self.app(scope, receive, send)
        start, body = None, []

        async def rewrite(message):
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            headers = dict(start["headers"])
            page = b"".join(body)
            body_at = page.find(b"<body")
            if headers.get(b"content-type", b"").startswith(b"text/html") and b"content-encoding" not in headers and body_at >= 0:
                inside = page.index(b">", body_at) + 1
                page = page[:inside] + self.first_view + page[inside:]
                headers[b"content-length"] = str(len(page)).encode()
            await send({**start, "headers": list(headers.items())})
            await send({"type": "http.response.body", "body": page})
        await self.app(scope, receive, rewrite)

"""The floor for a lecture hall's phones (benchmarks/rest_load.py --with-page): bare Starlette routes that answer a
student's page and a vote as app.py's do (the same bytes of page, a short JSON line), doing no other work."""
import os

import uvicorn
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route

from attn_demo.ui.student_page import student_html

ROOM = {"room": "ABCDEF", "model": "", "version": 0, "step": 1, "steps": 4, "english": ["▁the", "▁red", "▁car", "</s>"],
        "french": [], "revealed": False, "finished": False, "alpha": None, "counts": None, "result": None, "summary": None}
PAGE = student_html("ABCDEF", ROOM)


async def page(request):
    return HTMLResponse(PAGE, headers={"Cache-Control": "no-store"})


async def vote(request):
    ballot = await request.json()
    return JSONResponse({"line": f"Your vote for step {ballot['step']}"}, headers={"Cache-Control": "no-store"})


app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("ok")), Route("/join/{code}", page),
                        Route("/rooms/{code}/votes", vote, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["GRADIO_SERVER_PORT"]), log_level="warning")

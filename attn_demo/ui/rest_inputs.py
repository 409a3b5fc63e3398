"""A REST call's inputs checked before Gradio sees them: missing ones filled in with their documented defaults, and a
call that still lacks one, has too many or one of the wrong kind answered at once with a message naming it.

Gradio's REST API (POST /gradio_api/call/NAME, {"data": [...]}) takes the inputs in the order /gradio_api/info lists
them. Given fewer, or a number where a text goes, Gradio fails inside the call: its event stream says only
{"error": null} and the server prints a traceback. RestInputs is ASGI middleware that reads that list from the
page's API info and answers such a call with HTTP 422 and {"detail": message} instead; a whole, well-formed call
passes through untouched (a value outside a picker's choices is left to Gradio, whose message says so). A call to a
name the app does not have, which Gradio answers with HTTP 500 and a traceback in the server's log, is answered
with HTTP 404 and a message naming the app's endpoints.
"""
import json

CALL_PREFIX = "/gradio_api/call/"
JSON_KINDS = {"string": (str,), "number": (int, float), "integer": (int, float), "boolean": (bool,)}


def checked_inputs(name: str, parameters: list[dict], data: list) -> tuple[list, str]:
    """(the inputs with the missing ones' defaults filled in, '') or ([], what is wrong with them)."""
    names = ", ".join(p["parameter_name"] for p in parameters)
    if len(data) > len(parameters):
        return [], f"{name} takes {len(parameters)} inputs ({names}), not {len(data)}."
    data = list(data) + [None] * (len(parameters) - len(data))
    missing = [p["parameter_name"] for p, value in zip(parameters, data) if value is None and not p["parameter_has_default"]]
    if missing:
        return [], f"{name} is missing {', '.join(missing)}: it takes {len(parameters)} inputs ({names}), in that order."
    filled = [p["parameter_default"] if value is None else value for p, value in zip(parameters, data)]
    for parameter, value in zip(parameters, filled):
        error = kind_error(parameter, value)
        if error:
            return [], f"{name}: {error}"
    return filled, ""


def kind_error(parameter: dict, value) -> str:
    """What is wrong with `value` for this input, by the JSON type /gradio_api/info gives it ('' where nothing)."""
    kind = parameter.get("type", {}).get("type")
    accepted = JSON_KINDS.get(kind)
    if accepted is None or value is None:
        return ""
    if isinstance(value, accepted) and not (kind != "boolean" and isinstance(value, bool)):
        if kind != "integer" or float(value).is_integer():
            return ""
    return f"{parameter['parameter_name']} must be {'an' if kind == 'integer' else 'a'} {kind}, not {json.dumps(value)[:40]}."


def unknown_endpoint(name: str, endpoints) -> str:
    """What a call to a name the app lacks is told: the name (cut short) and every endpoint it has."""
    shown = name if len(name) <= 40 else name[:40] + "…"
    return f"This app has no endpoint {json.dumps(shown, ensure_ascii=False)}. Its endpoints: {', '.join(sorted(endpoints))}."


async def reply_json(send, status: int, content: dict):
    reply = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(reply)).encode())]})
    await send({"type": "http.response.body", "body": reply})


class RestInputs:
    """ASGI middleware over the page `blocks`: a POST to /gradio_api/call/NAME for a name the page lacks is answered
    with 404, one whose inputs checked_inputs refuses with 422 and the message; one with missing inputs that have
    defaults goes on with them filled in."""

    def __init__(self, app, blocks):
        self.app, self.blocks, self.endpoints = app, blocks, None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith(CALL_PREFIX):
            return await self.app(scope, receive, send)
        name, endpoints = scope["path"].removeprefix(CALL_PREFIX).strip("/"), self.named_endpoints()
        if name not in endpoints:
            return await reply_json(send, 404, {"detail": unknown_endpoint(name, endpoints)})
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        body, error = self.check(name, body)
        if error:
            return await reply_json(send, 422, {"detail": error})
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()  # after the body: a disconnect, as the client sends it
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
        await self.app({**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}, replay, send)

    def named_endpoints(self) -> dict:
        """Each endpoint's name → its inputs, from the API info (read once the page is running)."""
        if self.endpoints is None:
            self.endpoints = {key.lstrip("/"): value["parameters"]
                              for key, value in self.blocks.get_api_info()["named_endpoints"].items()}
        return self.endpoints

    def check(self, name: str, body: bytes) -> tuple[bytes, str]:
        """(the body to pass on, '') or (b'', the message) for a call to one of the named endpoints; a body that is
        not a call's JSON passes as it came, for FastAPI to answer as it does."""
        try:
            call = json.loads(body)
        except ValueError:
            return body, ""
        if not isinstance(call, dict) or not isinstance(call.get("data"), list):
            return body, ""
        data, error = checked_inputs(name, self.named_endpoints()[name], call["data"])
        return (b"", error) if error else (json.dumps({**call, "data": data}).encode(), "")

"""HTTP routes on the WebSocket port: ``/healthz``, ``/readyz``, ``/metrics``, the JSON
``apis`` (players' profiles, challenges, replays), ``/replay/CODE`` (to the client's
replay viewer) and the browser client's static files (docs/protocol.md)."""

from __future__ import annotations

import hashlib
import mimetypes
import re
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from .metrics import CONTENT_TYPE

PLACEHOLDER = b"""<!doctype html><meta charset="utf-8"><title>Klondike Race</title>
<h1>Klondike Race</h1><p>The server is running. Connect a WebSocket client to this address;
docs/protocol.md describes the messages.</p>
"""


# a "%" that does not start an escape of two hex digits: urllib's unquote keeps it as it
# is, so a route that reads percent-encoded text checks for it (bad percent-encoding)
BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status, HTTPStatus(status).phrase, headers, body)


# types Python's table may lack or get wrong (docs/protocol.md, "HTTP routes")
TYPES = {
    ".webmanifest": "application/manifest+json",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

# the service worker (client/sw.js) names its shell here: the server writes in the client's
# files and their SHA-256, so that any change to a file changes sw.js itself, which is how
# a browser finds a new deploy (docs/client.md, "Installable")
SHELL_MARK = b'"__KR_SHELL__"'
WORKER = "sw.js"


def shell(base: Path) -> bytes:
    """The client's files (all but the worker and dot files) by path relative to the
    client's root, each with its SHA-256, and a version over them all: JSON."""
    files: dict[str, str] = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base).as_posix()
        if not path.is_file() or rel == WORKER or any(p.startswith(".") for p in rel.split("/")):
            continue
        files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    version = hashlib.sha256(orjson.dumps(files, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
    return orjson.dumps({"version": version, "files": files})


# ``/replay/CODE[/STEP]``, the replay links of profiles and archives: the client's viewer
REPLAY_PAGE = re.compile(r"/replay/([A-HJ-NP-Z2-9]{6})(?:/(\d{1,6}))?/?")

Api = Callable[[str, str], Awaitable[tuple[int, dict[str, Any]]]]


class Routes:
    """``process_request`` for websockets' server: None lets a WebSocket upgrade through."""

    def __init__(
        self,
        client_dir: Path,
        metrics: Callable[[], bytes],
        unready: Callable[[], Awaitable[str | None]],
        apis: dict[str, Api] | None = None,
    ) -> None:
        self.client_dir = client_dir.resolve()
        self.metrics = metrics
        self.unready = unready  # why the node cannot serve now, or None
        # JSON routes by path prefix ("/api/players/"): the handler gets the rest of the
        # path and the query string, and answers (status, JSON body)
        self.apis = apis or {}

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        method = getattr(request, "method", "GET")  # websockets < 15 parses GET only
        if method not in ("GET", "HEAD"):
            answer = response(405, b"method not allowed\n", "text/plain")
            answer.headers["Allow"] = "GET, HEAD"
            return answer
        path, _, query = request.path.partition("?")
        api = next((p for p in self.apis if _under(path, p)), None)
        if api is not None:
            status, body = await self.apis[api](path[len(api) :], query)
            answer = response(status, orjson.dumps(body), "application/json")
        elif path == "/readyz":
            why = await self.unready()
            answer = (
                response(200, b"ready\n", "text/plain")
                if why is None
                else response(503, f"{why}\n".encode(), "text/plain")
            )
        else:
            answer = self.route(path)
        if method == "HEAD":  # the same headers, no body
            return Response(answer.status_code, answer.reason_phrase, answer.headers, b"")
        return answer

    def route(self, path: str) -> Response:
        if path == "/healthz":
            return response(200, b"ok\n", "text/plain")
        if path == "/metrics":
            return response(200, self.metrics(), CONTENT_TYPE)
        page = REPLAY_PAGE.fullmatch(path)
        if page is not None:  # the client's page at its own address, on the viewer
            code, step = page.groups()
            answer = response(302, b"", "text/plain")
            answer.headers["Location"] = f"/#/replay/{code}" + (f"/{step}" if step else "")
            return answer
        return self.static(path)

    def static(self, path: str) -> Response:
        if path in ("/", ""):
            path = "/index.html"
        base = self.client_dir
        try:
            target = (base / path.lstrip("/")).resolve()
            found = base in target.parents and target.is_file()
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            found = False
        if found:
            kind = TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0]
            body = target.read_bytes()
            if target == base / WORKER:
                body = body.replace(SHELL_MARK, shell(base), 1)
            return response(200, body, kind or "application/octet-stream")
        if path == "/index.html":
            return response(200, PLACEHOLDER, "text/html; charset=utf-8")
        return response(404, b"not found\n", "text/plain")


def _under(path: str, api: str) -> bool:
    """Whether ``path`` is the API ``api``'s own path or one under it ("/api/arenasX" is
    no path of "/api/arenas")."""
    return path.startswith(api) and (api.endswith("/") or path[len(api) :][:1] in ("", "/"))

"""The installable app (issue 34): the web app manifest and its icons, and the service
worker (client/sw.js), which keeps the client's shell and nothing else, and shows an
offline page when the server cannot be reached. The other browser tests block the
worker (conftest.py); this one allows it."""

from __future__ import annotations

import re

from playwright.sync_api import Response

CACHED = """async () => {
  const out = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    out[name] = (await cache.keys()).map((r) => new URL(r.url).pathname);
  }
  return out;
}"""
SIZE = """async (src) => {
  const image = await createImageBitmap(await (await fetch(src)).blob());
  return `${image.width}x${image.height}`;
}"""


def test_the_app_installs_and_its_worker_keeps_the_shell_only(players) -> None:
    alice = players(service_workers="allow", fresh=True)
    # the offline page's tries to reach the server while it is offline
    alice.expected.append(re.compile(r"ERR_INTERNET_DISCONNECTED"))
    page = alice.page
    alice.open()
    # the manifest, linked from the page, served as one, its icons of their sizes
    href = page.get_attribute('link[rel="manifest"]', "href")
    answer = page.request.get(f"{alice.base}/{href}")
    assert answer.headers["content-type"] == "application/manifest+json"
    manifest = answer.json()
    assert (manifest["name"], manifest["start_url"], manifest["display"]) == (
        "Klondike Race",
        "/",
        "standalone",
    )
    assert manifest["short_name"] and manifest["background_color"] == "#0f6b32"
    icons = {(i["sizes"], i["purpose"]) for i in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= icons
    for icon in manifest["icons"]:
        if icon["type"] == "image/png":
            assert page.evaluate(SIZE, icon["src"]) == icon["sizes"], icon
    # the worker: installed with the shell, it controls the page after a reload
    page.evaluate("async () => (await navigator.serviceWorker.ready).active.state")
    answers: list[Response] = []
    page.on("response", lambda r: answers.append(r))
    page.reload()
    page.wait_for_selector('#conn-state[data-state="open"]')  # the WebSocket as ever
    assert page.evaluate("() => navigator.serviceWorker.controller !== null")
    by_path = {re.sub(r"^https?://[^/]+", "", r.url): r for r in answers}
    assert by_path["/"].from_service_worker  # the page and its modules from the shell
    assert by_path["/js/app.js"].from_service_worker
    assert by_path["/css/app.css"].from_service_worker
    # nothing dynamic from the worker: an /api/ route goes to the server
    with page.expect_response(re.compile(r"/api/arenas$")) as api:
        page.evaluate("() => fetch('api/arenas').then((r) => r.status)")
    assert api.value.status == 200 and not api.value.from_service_worker
    # one cache, of this version: the shell's files, never the API, the socket, the worker
    cached = page.evaluate(CACHED)
    assert len(cached) == 1 and next(iter(cached)).startswith("kr-shell-"), cached
    paths = next(iter(cached.values()))
    assert {"/index.html", "/js/app.js", "/css/app.css", "/offline.html"} <= set(paths)
    assert "/manifest.webmanifest" in paths and "/icons/icon-512.png" in paths
    assert not [p for p in paths if p.startswith(("/api/", "/ws")) or p == "/sw.js"], paths
    # offline: a reload shows the offline page, which comes back by itself once online
    alice.context.set_offline(True)
    page.reload()
    page.wait_for_selector("#offline-page")
    assert page.text_content("#offline-text") == (
        "You are offline: Klondike Race needs the server to play; it will reconnect when"
        " you are back."
    )
    alice.context.set_offline(False)
    page.wait_for_selector('#conn-state[data-state="open"]')
    assert page.locator("#screen-lobby").is_visible()
    # a new deploy's worker taking over (its `controllerchange`): a page showing the lobby
    # reloads into the new version; one with a page over the lobby (the arenas' recent
    # results) goes on
    takeover = "() => navigator.serviceWorker.dispatchEvent(new Event('controllerchange'))"
    assert page.evaluate("() => navigator.serviceWorker.controller !== null")
    page.evaluate("() => { location.hash = '#/arenas'; }")
    page.wait_for_function("() => document.body.dataset.route === 'arena'")
    page.evaluate("() => { window.stayed = true; }")
    page.evaluate(takeover)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.stayed === true")
    page.evaluate("() => { history.back(); }")
    page.wait_for_function("() => document.body.dataset.route === ''")
    with page.expect_navigation():
        page.evaluate(takeover)
    page.wait_for_selector('#conn-state[data-state="open"]')
    assert page.evaluate("() => window.stayed === undefined")

"""Browser tests: a real redis-server, the real race server as a subprocess (serving the
client from client/), and Debian's Chromium driven by Playwright for Python.

Chromium must be at /usr/bin/chromium (tests/run.sh installs Debian's package when it is
missing); without it these tests fail, they are never skipped. Screenshots go to
test-artifacts/client/.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    FloatRect,
    Page,
    WebSocketRoute,
    sync_playwright,
)

from klondike_race.service.embedded import EmbeddedRedis
from tests.conftest import ROOT
from tests.servers import ServerProcess

CHROMIUM = "/usr/bin/chromium"
# The machine may have no internet: without these Chromium keeps trying to reach Google.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # the compositor's work in the browser process, not in a GPU process of its own (there
    # is no GPU): test_browser.py, -n 4, 3 alternated pairs, 0.82-0.95x Chromium's CPU
    # and 0.84-0.88x the wall time; alone, 150.9 CPU-s against 186-207
    "--in-process-gpu",
    # one renderer process may serve pages of several sites: the tests' pages are one
    # site's (the servers', on 127.0.0.1), yet each reused context's page went to
    # about:blank and back into a new renderer. test_browser.py, -n 4, 2 alternated
    # pairs: 47 renderers started against 172-177, 0.85-0.88x Chromium's CPU, 0.88-0.90x
    # the wall time
    "--disable-site-isolation-trials",
    "--disable-features=IsolateOrigins,site-per-process",
]
ARTIFACTS = ROOT / "test-artifacts" / "client"
COUNTDOWN_MS = 1200
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 667}


@pytest.fixture(scope="package")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), appendfsync="always").start()
    yield server.url
    server.stop()


@pytest.fixture(scope="package")
def server(redis_url: str) -> Iterator[ServerProcess]:
    srv = ServerProcess(
        redis_url,
        KR_COUNTDOWN_MS=str(COUNTDOWN_MS),
        KR_ATTEMPTS_PER_ADDRESS="1000",  # every browser here is 127.0.0.1
        KR_CLIENT_DIR=str(ROOT / "client"),
        KR_RATE="20",  # the server's own limits: the client must keep under them
        KR_BURST="40",
        KR_DAILY_DRAWS="none",  # no dailies: the daily tests have servers of their own
        # a page with no X-Forwarded-For comes from 127.0.0.1; a test may give a page's
        # context an address of its own (``extra_http_headers``)
        KR_TRUST_FORWARDED="1",
    ).start()
    yield srv
    srv.stop()


DAY_MS = 86_400_000
DAILY_CLOSE_S = 30  # today's daily closes this long after the daily server starts
DAILY_LIMIT_S = 12  # its attempts' time limit: it is final (revealed) this long after


def offset_to_close(seconds: float, now_ms: int | None = None) -> int:
    """A server clock offset (``KR_CLOCK_OFFSET_MS``) that puts the next UTC midnight,
    the close of today's dailies, ``seconds`` from now."""
    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    offset = (now // DAY_MS + 1) * DAY_MS - int(seconds * 1000) - now
    return offset if offset >= 0 else offset + DAY_MS  # the clock only runs ahead


class DailyServer(ServerProcess):
    closes_at: float  # the real time (time.time()) at which its today's dailies close


@pytest.fixture(scope="module")
def daily_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DailyServer]:
    """A server of its own (its own Redis: no other server prepares its deals) whose clock
    is shifted so that today's daily (Draw 1 only) closes ``DAILY_CLOSE_S`` after it starts."""
    redis = EmbeddedRedis(tmp_path_factory.mktemp("redis-daily"), appendfsync="always").start()
    offset = offset_to_close(DAILY_CLOSE_S)
    closes_at = time.time() + DAILY_CLOSE_S
    srv = DailyServer(
        redis.url,
        KR_COUNTDOWN_MS=str(COUNTDOWN_MS),
        KR_ATTEMPTS_PER_ADDRESS="1000",  # every browser here is 127.0.0.1
        KR_CLIENT_DIR=str(ROOT / "client"),
        KR_CLOCK_OFFSET_MS=str(offset),
        KR_DAILY_DRAWS="1",
        KR_SOLVER_CHALLENGE_S="3",
        KR_CHALLENGE_TIME_LIMIT_S=str(DAILY_LIMIT_S),
    )
    srv.closes_at = closes_at
    srv.start()
    yield srv
    srv.stop()
    redis.stop()


def scheduled_server(
    folder: Path,
    schedule: str,
    offset_ms: int,
    server: type[ServerProcess] = ServerProcess,
    **env: str,
) -> Iterator[Any]:
    """A server of its own (its own Redis, ``redis_url``) whose arenas come from
    ``schedule`` and whose clock is ``offset_ms`` ahead (``env``: more of its settings):
    the arena tests' fixtures."""
    path = folder / "arenas.txt"
    path.write_text(schedule)
    store = EmbeddedRedis(folder / "redis", appendfsync="always").start()
    srv = server(
        store.url,
        KR_COUNTDOWN_MS=str(COUNTDOWN_MS),
        KR_CLIENT_DIR=str(ROOT / "client"),
        KR_CLOCK_OFFSET_MS=str(offset_ms),
        KR_ARENAS_FILE=str(path),
        KR_DAILY_DRAWS="none",
        **env,
    )
    srv.redis_url = store.url  # type: ignore[attr-defined]
    yield srv.start()
    srv.stop()
    store.stop()


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium package (tests/run.sh does it)"
        )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="package")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


PLAY_LINE = """async (steps) => {
  const { store, intent } = window.kr;
  const answered = (n) => new Promise((resolve, reject) => {
    let stop = null;
    const check = () => {
      const s = store.state;
      if (s.seq >= n && !s.inflight) { if (stop) stop(); resolve(); }
      else if (s.refusal && s.refusal.seq === n) {
        if (stop) stop();
        reject(new Error(s.refusal.reason));
      }
    };
    stop = store.subscribe(check);
    check();
  });
  for (const step of steps) {
    const n = store.state.seq + 1;
    intent(typeof step === 'string' ? { action: step }
      : { from: step.from, to: step.to, count: step.count }, null);
    await answered(n);
  }
}"""


class Wire:
    """A player's WebSocket routed through Playwright: every frame both ways is logged in
    order (``log``: ("out" or "in", message)), and what the server sends may be rewritten
    (``rewrite``) or held back (``hold``, until ``release``): a test can then tell that the
    client acts on the server's word and not on rules of its own."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict]] = []
        self.rewrite: Callable[[dict], dict] | None = None
        self.hold: Callable[[dict], bool] | None = None
        self.held: list[tuple[WebSocketRoute, dict]] = []
        self.opened: list[int] = []  # where in ``log`` each connection began

    def route(self, ws: WebSocketRoute) -> None:
        self.opened.append(len(self.log))
        server = ws.connect_to_server()

        def out(message: str | bytes) -> None:
            self.log.append(("out", json.loads(message)))
            server.send(message)

        def into(message: str | bytes) -> None:
            msg = json.loads(message)
            if self.hold is not None and self.hold(msg):
                self.held.append((ws, msg))
                return
            if self.rewrite is not None:
                msg = self.rewrite(msg)
                message = json.dumps(msg)
            self.log.append(("in", msg))
            ws.send(message)

        ws.on_message(out)
        server.on_message(into)

    def release(self) -> None:
        """Deliver what was held back, in order, and hold nothing more."""
        self.hold = None
        held, self.held = self.held, []
        for ws, msg in held:
            self.log.append(("in", msg))
            ws.send(json.dumps(msg))

    def sent(self, kind: str) -> list[dict]:
        return [m for way, m in self.log if way == "out" and m.get("type") == kind]

    def firsts(self) -> list[dict]:
        """The first message the client sent on each connection."""
        ends = [*self.opened[1:], len(self.log)]
        out = []
        for start, end in zip(self.opened, ends, strict=True):
            sent = [m for way, m in self.log[start:end] if way == "out"]
            if sent:
                out.append(sent[0])
        return out


class Player:
    """One browser context (its own localStorage, its own WebSocket) and its page (a new
    page of ``context`` unless ``page`` is given)."""

    def __init__(self, context: BrowserContext, base: str, page: Page | None = None) -> None:
        self.context = context
        self.base = base
        self.page: Page = page or context.new_page()
        self.errors: list[str] = []
        # console errors a test expects (e.g. the browser's own line for a 404 it asked
        # for): matched against "TEXT @ URL"
        self.expected: list[re.Pattern[str]] = []
        # the last frames both ways and the console's lines, printed when a test fails
        self.frames: deque[str] = deque(maxlen=60)
        # what Contexts needs to hand the context on: the origins whose storage to clear,
        # and the listeners there were before this player's own
        self.origins: set[str] = set()
        self.before = self._listening()
        self._listeners: list[tuple[str, Callable[[Any], None]]] = [
            ("pageerror", lambda e: self.errors.append(f"pageerror: {e}")),
            ("console", self._console),
            ("websocket", self._socket),
            ("framenavigated", self._navigated),
        ]
        for event, listener in self._listeners:
            self.page.on(event, listener)  # type: ignore[call-overload]
        self.page.set_default_timeout(10_000)

    def detach(self) -> None:
        """Stop listening to the page (before it is handed on)."""
        for event, listener in self._listeners:
            self.page.remove_listener(event, listener)

    def _impl(self) -> list[Any]:
        # Playwright's own objects under the API's (they have listeners of their own)
        return [self.context._impl_obj, self.page._impl_obj]

    def _listening(self) -> dict[str, int]:
        return {
            f"{i} {event}": len(o.listeners(event))
            for i, o in enumerate(self._impl())
            for event in o.event_names()
        }

    def untouched(self) -> bool:
        """Whether, this player's listeners gone, the test left no listener or WebSocket
        route of its own on the page or its context: neither can be reset by Contexts."""
        routes = [getattr(o, "_web_socket_routes", [None]) for o in self._impl()]
        return self._listening() == self.before and not any(routes)

    def _navigated(self, frame: Any) -> None:
        origin = re.match(r"https?://[^/]+", frame.url)
        if origin:
            self.origins.add(origin.group(0))

    def _socket(self, ws: Any) -> None:
        def keep(way: str) -> Callable[[Any], None]:
            return lambda payload: self.frames.append(
                f"{time.monotonic():.3f} {way} {payload}"[:300]
            )

        self.frames.append(f"{time.monotonic():.3f} opened {ws.url}")
        ws.on("framesent", keep("out"))
        ws.on("framereceived", keep("in"))
        ws.on("close", lambda _: self.frames.append(f"{time.monotonic():.3f} closed"))

    def _console(self, message: Any) -> None:
        self.frames.append(f"{time.monotonic():.3f} console {message.type}: {message.text}"[:300])
        if message.type == "error":
            line = f"{message.text} @ {message.location.get('url', '')}"
            if not any(p.search(line) for p in self.expected):
                self.errors.append(f"console: {line}")

    def wire(self) -> Wire:
        """Route this player's WebSocket through a Wire (before the page connects)."""
        wire = Wire()
        self.context.route_web_socket(re.compile(r"/ws$"), wire.route)
        return wire

    def open(self, query: str = "") -> Player:
        self.page.goto(self.base + query)
        self.page.wait_for_selector('#conn-state[data-state="open"]')
        return self

    def screen(self, name: str, timeout: float = 10_000) -> None:
        self.page.wait_for_selector(f"#screen-{name}:not([hidden])", timeout=timeout)

    def set_name(self, name: str) -> None:
        self.page.fill("#name", name)
        self.page.locator("#name").dispatch_event("change")

    def create(
        self,
        name: str,
        seed: str | None = None,
        cards: list[str] | None = None,
        checks: tuple[str, ...] = (),
        **form: str,
    ) -> str:
        """Create a room from the lobby form (a dev deal by seed or cards, if given)."""
        if seed:
            self.open(f"?seed={seed}")
        elif cards:
            self.open("?cards=" + ",".join(cards))
        else:
            self.open()
        self.set_name(name)
        for field, value in form.items():
            self.page.select_option(f'#create-form [name="{field}"]', value)
        for field in checks:
            self.page.check(f'#create-form [name="{field}"]')
        self.page.click("#btn-create")
        self.screen("room")
        return self.page.text_content("#room-code") or ""

    def join(self, name: str, code: str) -> None:
        """Join by the lobby's form (the code typed in) after choosing a name: one page
        load (the room's link, ?join=CODE, has tests of its own)."""
        self.open()
        self.set_name(name)
        self.page.fill("#join-code", code)
        self.page.click('#join-form button[type="submit"]')
        self.screen("room")

    def watch(self, code: str) -> None:
        self.open(f"?watch={code}")
        self.screen("watch")

    def ready(self) -> None:
        self.page.click("#btn-ready")

    def wait_racing(self) -> None:
        self.screen("race")
        self.page.wait_for_function(
            "() => { const s = window.kr.store.state; return s.board && s.room.start_at"
            " && Date.now() + s.offset >= s.room.start_at; }",
            timeout=15_000,
        )
        self.page.wait_for_selector("#countdown", state="hidden")

    def state(self, expression: str) -> Any:
        """A value read from the client's state (window.kr.store.state as ``s``)."""
        script = f"() => {{ const s = window.kr.store.state; return {expression}; }}"
        return self.page.evaluate(script)

    def card(self, name: str) -> str:
        return f'#my-board .card[data-card="{name}"]'

    def pile(self, name: str, board: str = "#my-board") -> str:
        return f'{board} .pile[data-pile="{name}"]'

    def box(self, selector: str) -> FloatRect:
        """The element's box once it is shown. A board drawn again between finding the
        element and measuring it leaves a detached element with no box: measure again."""
        where = self.page.locator(selector)
        for _ in range(20):
            where.wait_for(state="visible")
            box = where.bounding_box()
            if box is not None:
                return box
        raise AssertionError(f"{selector} has no box")

    def drag(self, source: str, target: str) -> None:
        """Press on a card, move in steps (pointer events), release over a pile."""
        page = self.page
        s = self.box(source)
        t = self.box(target)
        page.mouse.move(s["x"] + s["width"] / 2, s["y"] + min(12, s["height"] / 4))
        page.mouse.down()
        page.mouse.move(t["x"] + t["width"] / 2, t["y"] + min(t["height"] - 10, 60), steps=10)
        page.mouse.up()

    def play_line(self, steps: list) -> None:
        """Play moves through the client's own intent path, each waiting for its ack."""
        self.page.evaluate(PLAY_LINE, steps)

    def shot(self, path: Path, full_page: bool = False) -> None:
        """A screenshot of the page for the docs, when ``KR_SCREENSHOTS`` is set (a
        full-page one of a tall screen costs a second or two of the machine; the suite
        asserts nothing by it). A failed test's pages are always shot (player_factory)."""
        if os.environ.get("KR_SCREENSHOTS"):
            self.page.screenshot(path=str(path), full_page=full_page)
            assert path.stat().st_size > 1000

    def check_errors(self) -> None:
        assert not self.errors, self.errors


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed
    return report


FAILED = pytest.StashKey[bool]()


class Contexts:
    """The worker's browser contexts, each with its one page, handed from test to test: a
    new context costs the machine about 1.6 CPU-s (a new page starts a renderer process),
    its page navigated again 0.6. A context is handed on only from a test that passed and
    left no listener or WebSocket route of its own (``Player.untouched``; a test that
    changes the context in other ways asks for a ``fresh`` one); before that its other pages are
    closed, its routes, permissions, cookies and offline state reset, its page sent to
    about:blank and the storage of every origin it visited cleared. Contexts of the same
    options but their viewport (set again) are interchangeable."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.idle: dict[str, list[Player]] = {}
        self.keys: dict[int, str] = {}  # id(context) -> its options, for a pooled one

    def take(self, base: str, viewport: dict, fresh: bool, **options: Any) -> Player:
        key = json.dumps(options, sort_keys=True)
        idle = self.idle.get(key)
        if idle and not fresh:
            old = idle.pop()
            old.page.set_viewport_size(viewport)  # type: ignore[arg-type]
            return Player(old.context, base, old.page)
        context = self.browser.new_context(viewport=viewport, **options)  # type: ignore[arg-type]
        if not fresh:
            self.keys[id(context)] = key
        return Player(context, base)

    def give_back(self, player: Player, passed: bool) -> None:
        context, page = player.context, player.page
        key = self.keys.pop(id(context), None)
        player.detach()
        if key is None or not passed or page.is_closed() or not player.untouched():
            context.close()
            return
        try:
            for other in context.pages:
                if other is not page:
                    other.close()
            context.unroute_all(behavior="ignoreErrors")
            page.unroute_all(behavior="ignoreErrors")
            context.set_offline(False)
            context.clear_permissions()
            context.clear_cookies()
            page.goto("about:blank")
            cdp = context.new_cdp_session(page)
            for origin in player.origins:
                cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            cdp.detach()
        except Exception:  # a page that cannot be reset is not handed on
            context.close()
            return
        self.keys[id(context)] = key
        self.idle.setdefault(key, []).append(player)

    def close(self) -> None:
        for idle in self.idle.values():
            for player in idle:
                player.context.close()
        self.idle.clear()


@pytest.fixture(scope="package")
def contexts(browser: Browser) -> Iterator[Contexts]:
    pool = Contexts(browser)
    yield pool
    pool.close()


def player_factory(
    contexts: Contexts, server: ServerProcess, request: pytest.FixtureRequest
) -> Iterator[Any]:
    """``make(viewport=..., fresh=False, **context_options)`` gives each player of
    ``server`` a context of its own, as new to it (``Contexts``); ``fresh=True``, a new
    context nobody else will have, for a test that changes the context itself beyond what
    Contexts resets or sees (init scripts, CDP settings). When the test
    fails, every page is screenshotted to test-artifacts/client/failed/."""
    made: list[Player] = []

    def make(viewport: dict | None = None, fresh: bool = False, **options: Any) -> Player:
        # Cards slide into place unless the user asks for reduced motion: tests ask for
        # it (positions are then final at once) except where they say otherwise.
        options.setdefault("reduced_motion", "reduce")
        # The client's service worker (client/sw.js) has a test of its own (test_pwa.py):
        # elsewhere it is blocked, so that every request goes to the server as routed
        # (Playwright's routes do not see a worker's answers) and no context spends time
        # caching the shell.
        options.setdefault("service_workers", "block")
        player = contexts.take(server.url, viewport or DESKTOP, fresh, **options)
        made.append(player)
        return player

    yield make
    if request.node.stash.get(FAILED, False):
        folder = ARTIFACTS / "failed"
        folder.mkdir(parents=True, exist_ok=True)
        for i, player in enumerate(made):
            try:
                player.page.screenshot(path=str(folder / f"{request.node.name}-{i}.png"))
            except Exception as err:  # the page may be gone; the failure is the news
                print(f"no screenshot of player {i}: {err}")
            print(f"player {i}'s last frames and console lines:\n" + "\n".join(player.frames))
        print("server output:\n" + "".join(server.output[-50:]))
    for player in made:
        passed = request.node.stash.get(FAILED, True) is False and not player.errors
        contexts.give_back(player, passed)
    for player in made:
        player.check_errors()


@pytest.fixture
def players(
    contexts: Contexts, server: ServerProcess, request: pytest.FixtureRequest
) -> Iterator[Any]:
    """``players(viewport=..., fresh=False, **context_options)``: players of the
    package's server."""
    yield from player_factory(contexts, server, request)


@pytest.fixture
def daily_players(
    contexts: Contexts, daily_server: DailyServer, request: pytest.FixtureRequest
) -> Iterator[Any]:
    """Players of the daily server (its clock shifted to just before a UTC midnight)."""
    yield from player_factory(contexts, daily_server, request)


def start_race(
    host: Player,
    guests: list[Player],
    seed: str | None = "42",
    watchers: tuple[Player, ...] = (),
    **create: Any,
) -> str:
    """Host creates a room on ``seed``, guests join by link, watchers watch, all ready."""
    code = host.create("Alice", seed=seed, **create)
    for i, guest in enumerate(guests):
        guest.join(["Bob", "Carol", "Dave"][i], code)
    for watcher in watchers:
        watcher.watch(code)
    for p in [host, *guests]:
        p.ready()
    host.page.locator("#countdown").wait_for(state="visible")  # the countdown shows
    for p in [host, *guests]:
        p.wait_racing()
    return code


def practise(player: Player, query: str = "?seed=42", name: str = "Alice") -> None:
    """A practice game from the lobby at ``query`` (a deal: `?seed=`, or `?cards=` with
    ``cards_query``), begun and running."""
    player.open(query)
    player.set_name(name)
    player.page.click("#btn-practice")
    player.wait_racing()


def cards_query(ref: dict[str, Any]) -> str:
    """The address query that deals a reference deal's cards."""
    return "?cards=" + ",".join(ref["cards"])

"""The path of one move through the server, module by module (docs/architecture.md).

    .venv/bin/python bench/move_path.py            # the summary
    .venv/bin/python bench/move_path.py --steps    # and every step of the path

A node runs in this process on its own redis-server; a player and a spectator are in a
race of two. The profiler records every call into the server's code (klondike_race.*)
from the moment the player's move frame is read until the player has its ack and the
spectator its update; calls made by the node's own loops (the sweeper, the heartbeat,
the readiness probe) are left out. The path is the sequence of modules called,
a module named again only when the path moves to it from another. It prints:

- modules: how many modules the path passes through, the shell's and the helpers' (the
  engine, the pure domain, the wire format and the clock: leaves that call nothing of
  the shell back) apart;
- re-entries: how many times the path comes back into a shell module it had already
  left for another shell module (a call into a helper and back is no re-entry).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import orjson
from websockets.asyncio.client import connect

from klondike_race.service.config import Config
from klondike_race.service.embedded import EmbeddedRedis
from klondike_race.service.logs import configure
from klondike_race.service.node import Node

PACKAGE = "klondike_race."
# leaves the path calls and that call nothing of the shell back: the engine, the pure
# domain, the wire format, the clock
HELPERS = (
    "klondike_race.engine",
    "klondike_race.service.domain",
    "klondike_race.service.wire",
    "klondike_race.service.clock",
)
# the node's own loops, whose calls are not the move's
LOOPS = (
    "Node._probe",
    "Node.probe_once",
    "Node._heartbeat",
    "Node._sessions_ended",
    "Sweeper.run",
    "Lobby.matcher",
    "Leaderboards.run",
    "Store.replicas",
)


def short(module: str) -> str:
    return module.removeprefix("klondike_race.service.").removeprefix("klondike_race.")


class Tracer:
    """Calls into klondike_race.* while on, as (module, function), in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.on = False

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if not self.on or event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(PACKAGE):
            return
        if frame.f_code.co_qualname.startswith(LOOPS):
            return
        self.calls.append((module, frame.f_code.co_qualname))

    @contextmanager
    def tracing(self) -> Iterator[None]:
        self.calls.clear()
        self.on = True
        sys.setprofile(self)
        threading.setprofile(self)
        try:
            yield
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
            self.on = False


def path_of(calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The calls with consecutive ones in one module folded into the first."""
    path: list[tuple[str, str]] = []
    for module, function in calls:
        if not path or path[-1][0] != module:
            path.append((module, function))
    return path


def measure(path: list[tuple[str, str]]) -> dict[str, Any]:
    shell = [m for m, _ in path if not m.startswith(HELPERS)]
    reentries = 0
    left: set[str] = set()
    previous: str | None = None
    for module in shell:
        if module != previous:
            if module in left:
                reentries += 1
            if previous is not None:
                left.add(previous)
            previous = module
    modules = {m for m, _ in path}
    return {
        "modules": len(modules),
        "shell": len({m for m in modules if not m.startswith(HELPERS)}),
        "helpers": len({m for m in modules if m.startswith(HELPERS)}),
        "reentries": reentries,
        "steps": len(path),
    }


async def until(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        m = orjson.loads(await ws.recv())
        if m["type"] == kind:
            return m
        if m["type"] == "error":
            raise RuntimeError(f"waiting for {kind}: {m}")


async def run(show_steps: bool) -> int:
    configure(json=False, level="warning")
    with tempfile.TemporaryDirectory() as data:
        redis = EmbeddedRedis(data).start()
        try:
            config = Config(
                host="127.0.0.1",
                port=0,
                redis_url=redis.url,
                countdown_ms=100,
                dev=True,
                daily_draws="",
            )
            node = Node(config, redis.url)
            port = await node.start()
            try:
                return await _race(port, show_steps)
            finally:
                await node.stop()
        finally:
            redis.stop()


async def _race(port: int, show_steps: bool) -> int:
    url = f"ws://127.0.0.1:{port}/ws"
    async with connect(url) as a, connect(url) as b, connect(url) as watcher:

        async def send(ws: Any, kind: str, **fields: Any) -> None:
            await ws.send(orjson.dumps({"type": kind, **fields}).decode())

        await send(a, "create", name="A", private=True)  # its spectators see the boards
        code = (await until(a, "welcome"))["room"]["code"]
        await send(b, "join", code=code, name="B")
        await until(b, "welcome")
        await send(watcher, "watch", code=code)
        await until(watcher, "welcome")
        for ws in (a, b):
            await send(ws, "ready")
        await until(a, "start")
        await asyncio.sleep(0.3)  # the countdown's timers and the start's news are done
        await send(a, "move", seq=1, action="draw")  # a warm-up: first-use costs left out
        await until(a, "ack")
        await until(watcher, "progress")
        await asyncio.sleep(0.3)
        tracer = Tracer()
        with tracer.tracing():
            await send(a, "move", seq=2, action="draw")
            ack = await until(a, "ack")
            await until(watcher, "progress")  # the last thing the move sets going
        if ack.get("seq") != 2:
            print("the move was not acknowledged:", ack)
            return 1
    path = path_of(tracer.calls)
    figures = measure(path)
    print(
        f"a move's path: {figures['modules']} modules ({figures['shell']} shell, "
        f"{figures['helpers']} helpers), {figures['reentries']} re-entries into a shell "
        f"module, {figures['steps']} steps"
    )
    if show_steps:
        for module, function in path:
            print(f"  {short(module):28} {function}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", action="store_true", help="print every step of the path")
    args = parser.parse_args()
    return asyncio.run(run(args.steps))


if __name__ == "__main__":
    sys.exit(main())

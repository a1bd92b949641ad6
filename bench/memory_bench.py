"""Memory of a node whose rooms have ended: prints figures, it is not a timed test.

One node process (``--role server``, started and GC-tuned as ``klondike-race serve`` is)
against a real redis-server, and this process as the clients. Each round plays ``--rooms``
rooms that end every way a room ends (resigned, won, time limit, left while waiting,
abandoned by disconnect; live and delayed spectators; quick match), a fifth of them
races taken over from another node that is SIGKILLed mid-race (their racers resume on
the measured node), then every client leaves. After each round, and then after a full
garbage collection and after ``malloc_trim(0)``, the node reports:

  rss           resident memory (VmRSS)
  rss_peak      the most it has been resident at once (VmHWM)
  round_peak    the most resident while the round played (read every 50 ms)
  py_used       bytes in pymalloc blocks in use (objects up to 512 bytes)
  py_arenas     pymalloc's 1 MiB arenas held
  malloc_used   bytes glibc malloc has handed out (larger objects, buffers) …
  malloc_free   … and holds free
  hubs          rooms in the node's registry; hubs_alive: RoomHub objects not freed yet
  tasks         asyncio tasks
  trim_ms       how long the ``malloc_trim(0)`` call took (after it only)

With ``--trim-each-round`` the node calls ``malloc_trim(0)`` after every round, as it
would after a sweep that found rooms ended: whether what it gives back stays given back
through the next round. glibc only (``mallinfo2``, glibc 2.33 or later).

    .venv/bin/python bench/memory_bench.py [--rooms 200] [--rounds 2] [--trim-each-round]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
DEALS = ROOT / "tests" / "data" / "deals.jsonl"


# ---- the node process ------------------------------------------------------------------------
class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")
    ]  # fmt: skip


def _libc() -> Any:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        return libc
    except (OSError, AttributeError):  # not glibc (>= 2.33)
        return None


def _pymalloc() -> tuple[int, int]:
    """(bytes in allocated blocks, arenas) from ``sys._debugmallocstats`` (on fd 2)."""
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode()

    def field(name: str) -> int:
        found = re.search(rf"# {name}\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else -1

    return field("bytes in allocated blocks"), field("arenas allocated current")


def _status_kb(field: str, pid: int | str = "self") -> int:
    """``field`` of /proc/PID/status (VmRSS, VmHWM) in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return -1


def _stats(node: Any, libc: Any) -> dict[str, Any]:
    from klondike_race.service.hub import RoomHub

    used, arenas = _pymalloc()
    out: dict[str, Any] = {
        "rss_kb": _status_kb("VmRSS"),
        "rss_peak_kb": _status_kb("VmHWM"),
        "py_used_kb": used // 1024,
        "py_arenas": arenas,
    }
    if libc is not None:
        info = libc.mallinfo2()
        out["malloc_used_kb"] = info.uordblks // 1024
        out["malloc_free_kb"] = info.fordblks // 1024
    out["hubs"] = len(node.hubs)
    out["hubs_alive"] = sum(1 for o in gc.get_objects() if type(o) is RoomHub)
    out["tasks"] = len(asyncio.all_tasks())
    return out


async def serve_role(args: argparse.Namespace) -> None:
    from klondike_race.service.cli import tune_gc
    from klondike_race.service.config import Config
    from klondike_race.service.logs import configure
    from klondike_race.service.node import Node

    configure(json=True, level="error")
    config = Config(
        port=args.port,
        redis_url=args.redis,
        countdown_ms=150,
        dev=True,
        rate=1e6,
        burst=1e6,
        log_level="error",
        solver_analysis_s=0.1,  # each finished race is analysed: short, so rounds settle
    )
    node = Node(config, args.redis)
    await node.start()
    tune_gc()  # as `klondike-race serve` does
    libc = _libc()
    background = len(node.background)  # the node's own loops (sweeper, probe, heartbeat, …)
    print("ready", flush=True)
    while command := (await asyncio.to_thread(sys.stdin.readline)).strip():
        if command == "settle":  # every connection gone, every analysis done
            for _ in range(6000):
                idle = not node.connections.open and not len(node.hubs)
                if idle and len(node.background) <= background:
                    break
                await asyncio.sleep(0.01)
        elif command == "collect":
            gc.collect()
        trimmed = None
        if command == "trim" and libc is not None:
            began = time.perf_counter()
            libc.malloc_trim(0)
            trimmed = round((time.perf_counter() - began) * 1000, 2)
        stats = _stats(node, libc)
        if trimmed is not None:
            stats["trim_ms"] = trimmed
        print(json.dumps(stats), flush=True)
    await node.stop()


# ---- clients -------------------------------------------------------------------------------
class Client:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.token: str | None = None
        self.seq = 0
        self.code: str | None = None

    @classmethod
    async def open(cls, port: int) -> Client:
        ws = await connect(
            f"ws://127.0.0.1:{port}/", compression=None, max_queue=None, open_timeout=60
        )
        return cls(ws)

    async def send(self, type: str, **fields: Any) -> None:
        await self.ws.send(orjson.dumps({"type": type, **fields}))

    async def expect(self, *types: str) -> dict[str, Any]:
        while True:
            m = orjson.loads(await asyncio.wait_for(self.ws.recv(), 30))
            if m["type"] == "error":
                raise RuntimeError(m)
            if m.get("token"):
                self.token = m["token"]
            if m["type"] in ("welcome", "resumed"):
                self.code = m["room"]["code"]
                self.seq = m.get("seq", self.seq)
            if m["type"] in types:
                return m

    async def request(self, type: str, *answers: str, **fields: Any) -> dict[str, Any]:
        await self.send(type, **fields)
        return await self.expect(*answers)

    async def move(self, **fields: Any) -> None:
        self.seq += 1
        await self.request("move", "ack", seq=self.seq, **fields)

    async def resign(self) -> None:
        self.seq += 1
        await self.request("resign", "ack", seq=self.seq)


def step(s: Any) -> dict[str, Any]:
    """A reference line's step (tests/data/README.md) as a move's fields."""
    if isinstance(s, str):
        return {"action": s}
    return {"from": s["from"], "to": s["to"], "count": s["count"]}


async def race(port: int, watchers: int = 0, **create: Any) -> list[Client]:
    """Two racers (and ``watchers`` spectators) at the start of a race."""
    a, b = await Client.open(port), await Client.open(port)
    await a.request("create", "welcome", name="a", **create)
    await b.request("join", "welcome", code=a.code, name="b")
    spectators = []
    for _ in range(watchers):
        w = await Client.open(port)
        await w.request("watch", "welcome", code=a.code)
        spectators.append(w)
    for c in (a, b):
        await c.send("ready")
    for c in (a, b):
        await c.expect("start")
    return [a, b, *spectators]


async def play_room(port: int, kind: int, win: dict[str, Any]) -> list[Client]:
    if kind == 0:  # both resign, watched live
        a, b, w = await race(port, 1)
        for c in (a, b, a):
            await c.move(action="draw")
        await a.resign()
        await b.resign()
        return [a, b, w]
    if kind == 1:  # watched behind the race; abandoned by disconnect mid-race
        a, b, *watchers = await race(port, 2, spectator_delay=5)
        for _ in range(3):
            await b.move(action="draw")
        await a.resign()  # a finished player sees the race behind too
        return [a, b, *watchers]
    if kind == 2:  # ended by its time limit
        a, b = await race(port, time_limit=10)
        await a.move(action="draw")
        while (await b.expect("room"))["room"]["phase"] != "finished":
            pass
        return [a, b]
    if kind == 3:  # won
        a, b, w = await race(port, 1, deal={"cards": win["cards"]})
        for s in win["line"]:
            await a.move(**step(s))
        await b.resign()
        return [a, b, w]
    if kind == 4:  # left while waiting
        h = await Client.open(port)
        await h.request("create", "welcome", name="h")
        return [h]
    if kind == 5:  # quick match, abandoned
        a, b = await Client.open(port), await Client.open(port)
        await a.request("quick", "queued", "welcome", name="a")
        await b.request("quick", "welcome", "queued", name="b")
        return [a, b]
    a, b, w = await race(port, 1)  # abandoned by disconnect mid-race
    await a.move(action="draw")
    return [a, b, w]


async def take_over(port: int, clients: list[Client], since: bool) -> list[Client]:
    """Racers of a killed node's room resume here, play, and resign."""
    a, b = clients[0], clients[1]
    a2, b2, w2 = await Client.open(port), await Client.open(port), await Client.open(port)
    await a2.request(
        "resume", "welcome", "resumed", token=a.token, **({"since": 1} if since else {})
    )
    await b2.request("resume", "welcome", token=b.token)
    await w2.request("watch", "welcome", code=a.code)
    await a2.move(action="draw")
    await a2.resign()
    if since:
        await b2.resign()
    return [a2, b2, w2]


def start_other(url: str, port: int) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "KR_PORT": str(port),
        "REDIS_URL": url,
        "KR_DEV": "1",
        "KR_COUNTDOWN_MS": "150",
        "KR_RATE": "1000",
        "KR_BURST": "2000",
        "KR_LOG_LEVEL": "error",
    }
    other = subprocess.Popen(
        [sys.executable, "-m", "klondike_race.cli", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdout is not None
    while "is running" not in (line := other.stdout.readline()):
        if not line:
            raise RuntimeError("the other node did not start")
    return other


async def one_round(port: int, url: str, rooms: int, concurrency: int) -> None:
    from klondike_race.service.embedded import free_port

    wins = [json.loads(line) for line in DEALS.read_text().splitlines()[:40]]
    wins = [d for d in wins if d["result"] == "win" and d["draw"] == 1]
    gate = asyncio.Semaphore(concurrency)
    # a fifth of the rooms race on another node, which is SIGKILLed mid-race
    other_port = free_port()
    other = start_other(url, other_port)
    on_other = []
    for _ in range(rooms // 5):
        clients = await race(other_port, 1)
        await clients[0].move(action="draw")
        on_other.append(clients)
    other.send_signal(signal.SIGKILL)
    other.wait()
    if other.stdout is not None:
        other.stdout.close()

    async def here(i: int) -> None:
        async with gate:
            kind = i % 7
            for c in await play_room(port, kind, wins[i % len(wins)]):
                await c.ws.close()

    async def resume(i: int) -> None:
        async with gate:
            for c in on_other[i]:
                with contextlib.suppress(Exception):
                    await c.ws.close()
            for c in await take_over(port, on_other[i], since=bool(i % 2)):
                await c.ws.close()

    await asyncio.gather(
        *(here(i) for i in range(rooms - len(on_other))),
        *(resume(i) for i in range(len(on_other))),
    )


async def sample_rss(pid: int, peak: list[int], played: asyncio.Event) -> None:
    """The node's resident memory every 50 ms while a round plays: its most in ``peak``."""
    while not played.is_set():
        peak[0] = max(peak[0], _status_kb("VmRSS", pid))
        await asyncio.sleep(0.05)


async def load_main(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT / "server"))
    from klondike_race.service.embedded import EmbeddedRedis, free_port

    tmp = tempfile.TemporaryDirectory(prefix="kr-membench-")
    redis = EmbeddedRedis(Path(tmp.name) / "redis", appendfsync="everysec").start()
    port = free_port()
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)
    node = subprocess.Popen(
        [sys.executable, __file__, "--role", "server", "--port", str(port), "--redis", redis.url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert node.stdin is not None and node.stdout is not None
    if node.stdout.readline().strip() != "ready":
        print("the node did not start", file=sys.stderr)
        return 1

    def ask(command: str) -> dict[str, Any]:
        assert node.stdin is not None and node.stdout is not None
        node.stdin.write(command + "\n")
        node.stdin.flush()
        return dict(json.loads(node.stdout.readline()))

    def show(label: str, stats: dict[str, Any]) -> None:
        print(f"{label:<34}" + "  ".join(f"{k}={v}" for k, v in stats.items()), flush=True)

    print(
        f"python {sys.version.split()[0]}; {args.rooms} rooms a round, {args.concurrency} at once"
    )
    try:
        show("started", ask("stats"))
        for n in range(1, args.rounds + 1):
            peak, played = [0], asyncio.Event()
            sampler = asyncio.create_task(sample_rss(node.pid, peak, played))
            await one_round(port, redis.url, args.rooms, args.concurrency)
            played.set()
            await sampler
            after = ask("settle")
            show(f"after {n * args.rooms} rooms, all left", {"round_peak_kb": peak[0], **after})
            if args.trim_each_round:
                show("then malloc_trim(0)", ask("trim"))
        show("after a full collection", ask("collect"))
        show("after malloc_trim(0)", ask("trim"))
    finally:
        node.stdin.close()
        node.wait(30)
        node.stdout.close()
        redis.stop()
        tmp.cleanup()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("load", "server"), default="load")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--redis", default="")
    parser.add_argument("--rooms", type=int, default=200, help="rooms per round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=40, help="rooms played at once")
    parser.add_argument(
        "--trim-each-round", action="store_true", help="malloc_trim(0) after every round"
    )
    args = parser.parse_args()
    if args.role == "server":
        asyncio.run(serve_role(args))
        return 0
    return asyncio.run(load_main(args))


if __name__ == "__main__":
    sys.exit(main())

"""Event order under churn: a soak of two nodes on one Redis that counts every versioned
message a connection receives out of order, and exits 1 on any (docs/benchmarks.md).

    .venv/bin/python bench/order_soak.py                 # 50 rooms of 4, 60 s
    .venv/bin/python bench/order_soak.py --rooms 50 --seconds 180

docs/protocol.md promises each room event once, in version order, from a connection's
`welcome` (or `resync`, `resumed`) on, and a move's `ack` in its event's place. Each
room has p1 on node A and p2-p4 on node B, which is started just before the rooms are
made (a node at start-up prepares the daily challenges' deals meanwhile), and one
spectator on each node. Racers make a legal move about every 0.5 s (a card home, else
draw, else recycle). Halfway, node B is killed (SIGKILL): its racers and spectators
reconnect to node A and `resume` with the `since` they had, as a client does. Every
message with a `v` is checked against the last one the connection received: an event
or a non-duplicate ack must be above it, a snapshot (`welcome`, `resync`) at or above
it, a `resumed` starts from its own `v`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from klondike_race.service.embedded import EmbeddedRedis, free_port
from server_bench import choose

SNAPSHOTS = ("welcome", "resync")


class Tally:
    def __init__(self) -> None:
        self.acks = self.events = self.resumes = self.refused = 0
        self.violations: list[str] = []


class Watcher:
    """One connection's order check: the last `v` it received."""

    def __init__(self, name: str, tally: Tally) -> None:
        self.name, self.tally, self.last = name, tally, -1
        self.token: str | None = None
        self.seen: list[str] = []  # the last few versioned messages, for a report

    def check(self, m: dict) -> None:
        kind, v = m["type"], m.get("v")
        if m.get("token"):
            self.token = m["token"]
        if v is None or (kind == "ack" and m.get("duplicate")):
            return
        self.seen = [*self.seen[-5:], f"{kind} v{v}"]
        if kind == "resumed":
            self.last = v
            return
        ok = v >= self.last if kind in SNAPSHOTS else v > self.last
        if not ok:
            self.tally.violations.append(f"{self.name}: {', '.join(self.seen)}")
        if kind == "ack":
            self.tally.acks += 1
        elif kind not in SNAPSHOTS:
            self.tally.events += 1
        self.last = max(self.last, v)


async def open_ws(port: int):
    return await connect(f"ws://127.0.0.1:{port}/", compression=None, open_timeout=30)


async def expect(ws, w: Watcher, *types: str) -> dict:
    while True:
        m = orjson.loads(await ws.recv())
        w.check(m)
        if m["type"] in types:
            return m
        if m["type"] == "error":
            raise RuntimeError(m)


class Racer:
    def __init__(self, w: Watcher, port: int) -> None:
        self.w, self.port = w, port
        self.ws = None
        self.board: dict | None = None
        self.seq = 0


async def play(r: Racer, ports: list[int], stop: asyncio.Event, rng: random.Random) -> None:
    """Move, read, and when the node goes away resume on the other one, until ``stop``."""
    while not stop.is_set():
        try:
            await asyncio.sleep(rng.expovariate(2.0))
            move = choose(r.board) if r.board and r.board["status"] == "playing" else None
            if move is not None:
                r.seq += 1
                await r.ws.send(orjson.dumps({"type": "move", "seq": r.seq, **move}))
            while True:  # read what came, answer included
                try:
                    raw = await asyncio.wait_for(r.ws.recv(), 0.05 if move is None else 10)
                except TimeoutError:
                    break
                m = orjson.loads(raw)
                r.w.check(m)
                if m["type"] in ("ack", "start", "resumed", "welcome") and "board" in m:
                    r.board = m["board"]
                if m["type"] == "refused":
                    r.w.tally.refused += 1
                    r.seq = m["seq"] - 1
                if m["type"] in ("ack", "refused") and move is not None:
                    break
        except ConnectionClosed:
            if stop.is_set():
                return
            await resume(r, ports)


async def resume(r: Racer, ports: list[int]) -> None:
    r.port = ports[0]  # the node left standing
    r.ws = await open_ws(r.port)
    since = {"since": r.w.last} if r.w.last >= 0 else {}
    await r.ws.send(orjson.dumps({"type": "resume", "token": r.w.token, **since}))
    m = await expect(r.ws, r.w, "resumed", "welcome")
    r.w.tally.resumes += 1
    r.board = m.get("board", r.board)
    r.seq = m.get("seq", r.seq)


async def spectate(w: Watcher, code: str, port: int, ports: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            ws = await open_ws(port)
            await ws.send(orjson.dumps({"type": "watch", "code": code}))
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    w.check(orjson.loads(await asyncio.wait_for(ws.recv(), 0.5)))
            await ws.close()
        except ConnectionClosed:
            port = ports[0]
            w.last = -1  # a new watch: a new welcome
            w.tally.resumes += 1


async def make_room(i: int, ports: list[int], tally: Tally) -> tuple[str, list[Racer]]:
    racers = [Racer(Watcher(f"room{i}.p{k + 1}", tally), ports[min(k, 1)]) for k in range(4)]
    host = racers[0]
    host.ws = await open_ws(host.port)
    await host.ws.send(orjson.dumps({"type": "create", "name": "p1", "capacity": 4}))
    code = (await expect(host.ws, host.w, "welcome"))["room"]["code"]
    for k, r in enumerate(racers[1:], 2):
        r.ws = await open_ws(r.port)
        await r.ws.send(orjson.dumps({"type": "join", "code": code, "name": f"p{k}"}))
        await expect(r.ws, r.w, "welcome")
    for r in racers:
        await r.ws.send(b'{"type":"ready"}')
    return code, racers


def start_node(port: int, url: str, log: Path) -> subprocess.Popen[bytes]:
    command = Path(sys.executable).parent / "klondike-race"
    env = {**os.environ, "KR_COUNTDOWN_MS": "2000", "KR_LOG_LEVEL": "warning"}
    out = log.open("ab")
    return subprocess.Popen(
        [command, "serve", "--port", str(port), "--redis-url", url],
        env=env,
        stdout=out,
        stderr=out,
    )


async def healthy(port: int) -> None:
    for _ in range(600):
        with contextlib.suppress(OSError):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if b" 200 " in await reader.read():
                writer.close()
                return
            writer.close()
        await asyncio.sleep(0.05)
    raise RuntimeError(f"node on {port} never became healthy")


async def soak(args: argparse.Namespace, url: str, logs: Path) -> int:
    tally, rng = Tally(), random.Random(args.seed)
    ports = [free_port(), free_port()]
    a = start_node(ports[0], url, logs / "a.log")
    await healthy(ports[0])
    b = start_node(ports[1], url, logs / "b.log")
    try:
        await healthy(ports[1])
        rooms = await asyncio.gather(*(make_room(i, ports, tally) for i in range(args.rooms)))
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(play(r, ports, stop, random.Random(rng.random())))
            for _, racers in rooms
            for r in racers
        ]
        for i, (code, _) in enumerate(rooms):
            for port in ports:
                w = Watcher(f"room{i}.watcher@{port}", tally)
                tasks.append(asyncio.create_task(spectate(w, code, port, ports, stop)))
        t0 = time.monotonic()
        await asyncio.sleep(args.seconds / 2)
        b.send_signal(signal.SIGKILL)
        print(f"node B killed at {time.monotonic() - t0:.1f} s", flush=True)
        await asyncio.sleep(args.seconds / 2)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(10)
    print(
        f"rooms {args.rooms}, {args.seconds:.0f} s: {tally.acks} acks, {tally.events} events, "
        f"{tally.refused} refused, {tally.resumes} reconnections; "
        f"{len(tally.violations)} out of order"
    )
    for line in tally.violations[:20]:
        print("  " + line)
    return 1 if tally.violations else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis").start()
        try:
            return asyncio.run(soak(args, redis.url, Path(tmp)))
        finally:
            redis.stop()


if __name__ == "__main__":
    sys.exit(main())

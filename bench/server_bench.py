"""Race server benchmark: prints figures (docs/benchmarks.md), it is not a timed test.

One server process (``--role server``: the race Node and, on the same event loop, a bare
websockets echo server) against a real redis-server with append-only persistence, and
this process as the load client: bots that make legal moves over real WebSockets.

    .venv/bin/python bench/server_bench.py            # the full run (a few minutes)
    .venv/bin/python bench/server_bench.py --quick    # a short smoke run

Scenarios:
  echo        closed loop against the echo server: the same-loop ceiling in msg/s
  sat-3+5     closed loop, rooms of 3 racers and 5 spectators (each move: ack + 7 updates)
  sat-1v1     closed loop, head-to-head rooms
  open-1000   1,000 racers in head-to-head rooms, 2 moves/s each at random (exponential)
              intervals, open loop: p50/p99 acknowledgement latency
  open-3+5    1,002 racers in rooms of 3 racers and 5 spectators (1,670 spectators), 2
              moves/s each, open loop: the watched race's p50/p99 and server CPU per move
  daily-5000  5,000 players on today's daily (Draw 1), each making a move every 2 s at
              random (exponential) intervals, open loop, all watching the live
              leaderboard: p99 acknowledgement, leaderboard frames per watcher per
              second, CPU, Redis memory per attempt (``--players`` changes the count)
  memory      server RSS per idle connection

Bots see only their own board; they play cards home when they can and otherwise draw or
recycle, which is always legal with unlimited passes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import orjson
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
RANKS = "A23456789TJQK"


# ---- the server process ------------------------------------------------------------------
def watch_gc(threshold: str | None = None) -> Callable[[], str]:
    """Tune the garbage collector as `klondike-race serve` does (``threshold``, e.g.
    "700,10,10", Python's default, for experiments) and time each collection; returns
    what to print: how many, and the worst pauses (generation, ms)."""
    import gc

    from klondike_race.service.cli import tune_gc

    tune_gc()
    if threshold:
        gc.set_threshold(*(int(x) for x in threshold.split(",")))
    pauses: list[tuple[int, float]] = []
    started = [0.0]

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], time.perf_counter() - started[0]))

    gc.callbacks.append(watch)

    def summary() -> str:
        worst = sorted(pauses, key=lambda p: -p[1])[:3]
        return f"{len(pauses)} collections, worst {[(g, round(t * 1000, 1)) for g, t in worst]} ms"

    return summary


async def serve_role(args: argparse.Namespace) -> None:
    from websockets.asyncio.server import serve

    from klondike_race.service.config import Config
    from klondike_race.service.logs import configure
    from klondike_race.service.node import Node

    configure(json=True, level="error")
    gc_pauses = watch_gc(os.environ.get("KR_BENCH_GC"))
    config = Config(
        host="127.0.0.1",
        port=args.port,
        redis_url=args.redis,
        countdown_ms=300,
        rate=1e6,
        burst=1e6,
        log_level="error",
        replica_acks=args.replica_acks,
        # the dailies (daily-5000): Draw 1 only, a fixed secret, a small solver budget
        daily_draws="1",
        challenge_secret="bench-secret",
        solver_challenge_s=2.0,
        solver_challenge_tries=10,
        reuse_port=args.workers > 1,  # `serve --workers N`: N processes on one port
    )
    for name in ("KR_COMMIT_CONNECTION", "KR_COMMAND_CONNECTION"):  # else the default (on)
        if os.environ.get(name):
            setting = name.removeprefix("KR_").lower()
            chosen = getattr(Config.from_env({name: os.environ[name]}), setting)
            setattr(config, setting, chosen)
    if os.environ.get("KR_SPECTATOR_BATCH_MS"):  # otherwise the server's default
        config.spectator_batch_ms = int(os.environ["KR_SPECTATOR_BATCH_MS"])
    if os.environ.get("KR_BOARD_INTERVAL_MS"):  # e.g. 10**9: the daily without pushes
        config.board_interval_ms = int(os.environ["KR_BOARD_INTERVAL_MS"])
    node = Node(config, args.redis)
    await node.start()

    async def echo(ws) -> None:
        async for message in ws:
            await ws.send(message)

    echo_server = await serve(
        echo,
        "127.0.0.1",
        args.echo_port,
        compression=None,
        max_size=4096,
        reuse_port=args.workers > 1 or None,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    profile = None
    if os.environ.get("KR_BENCH_PROFILE"):
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    print("ready", flush=True)
    await stop.wait()
    print(f"gc: {gc_pauses()}", file=sys.stderr, flush=True)
    if profile is not None:
        profile.disable()
        profile.dump_stats(os.environ["KR_BENCH_PROFILE"])
    echo_server.close()
    await node.stop()


# ---- bots ------------------------------------------------------------------------------------
def _rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def choose(board: dict) -> dict | None:
    """A legal move from what the bot can see: a card home, else draw, else recycle."""
    found = board["foundations"]

    def home(card: str) -> bool:
        top = found[card[1]]
        return _rank(card) == (_rank(top) if top else 0) + 1

    fan = board["waste"]["fan"]
    if fan and home(fan[-1]):
        return {"from": "waste", "to": "foundation", "count": 1}
    for i, col in enumerate(board["columns"]):
        if col["up"] and home(col["up"][-1]):
            return {"from": f"col{i + 1}", "to": "foundation", "count": 1}
    if board["stock"]:
        return {"action": "draw"}
    if board["waste"]["count"]:
        return {"action": "recycle"}
    return None


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.acks = 0
        self.refused = 0
        self.updates = 0
        self.boards = 0  # leaderboard frames (daily-5000)
        self.board_bytes = 0


async def open_ws(port: int):
    return await connect(
        f"ws://127.0.0.1:{port}/",
        compression=None,
        max_size=2**20,
        ping_interval=None,
        open_timeout=60,
    )


async def recv_type(ws, *types: str) -> dict:
    while True:
        message = orjson.loads(await ws.recv())
        if message["type"] in types:
            return message
        if message["type"] == "error":
            raise RuntimeError(message)


class Room:
    def __init__(self) -> None:
        self.racers: list = []  # [ws, board, seq]
        self.spectators: list = []


async def make_room(port: int, racers: int, spectators: int) -> Room:
    room = Room()
    host = await open_ws(port)
    await host.send(orjson.dumps({"type": "create", "name": "h", "capacity": racers}))
    code = (await recv_type(host, "welcome"))["room"]["code"]
    conns = [host]
    for i in range(1, racers):
        ws = await open_ws(port)
        await ws.send(orjson.dumps({"type": "join", "code": code, "name": f"r{i}"}))
        await recv_type(ws, "welcome")
        conns.append(ws)
    for _ in range(spectators):
        ws = await open_ws(port)
        await ws.send(orjson.dumps({"type": "watch", "code": code}))
        await recv_type(ws, "welcome")
        room.spectators.append(ws)
    for ws in conns:
        await ws.send(b'{"type":"ready"}')
    for ws in conns:
        start = await recv_type(ws, "start")
        room.racers.append([ws, start["board"], 0])
    return room


async def count_updates(ws, stats: Stats, stop: asyncio.Event) -> None:
    with contextlib.suppress(Exception):
        while not stop.is_set():
            await ws.recv(decode=False)  # not parsed: the load client stays light
            stats.updates += 1


class FrameCounter(asyncio.Protocol):
    """A spectator's connection once it watches, taken from websockets: the server's
    frames are counted, not parsed (their headers say where each ends), and a ping is
    answered. A websockets client spends tens of µs on each of the 10,000 updates a
    second of open-3+5's spectators, which filled the load client's core and made the
    acknowledgements' p99 the client's own queueing (docs/benchmarks.md)."""

    def __init__(self, transport: asyncio.Transport, stats: Stats) -> None:
        self.transport, self.stats, self.buf = transport, stats, b""

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        i, n = 0, len(buf)
        while n - i >= 2:
            first, length, head = buf[i], buf[i + 1] & 0x7F, 2
            if length == 126:
                length, head = int.from_bytes(buf[i + 2 : i + 4], "big"), 4
            elif length == 127:
                length, head = int.from_bytes(buf[i + 2 : i + 10], "big"), 10
            if n - i < head + length:
                break
            opcode = first & 0x0F
            if opcode == 0x9:  # ping: a pong with its payload, masked (a client's frames are)
                payload = buf[i + head : i + head + length]
                mask = os.urandom(4)
                masked = bytes(b ^ mask[k % 4] for k, b in enumerate(payload))
                self.transport.write(bytes((0x8A, 0x80 | len(payload))) + mask + masked)
            elif first & 0x80 and opcode in (0x1, 0x2):
                self.stats.updates += 1
            i += head + length
        self.buf = buf[i:]

    def connection_lost(self, exc: Exception | None) -> None:
        pass


def count_frames(ws, stats: Stats) -> asyncio.Transport:
    """Take ``ws``'s transport from websockets: its frames are counted from now on."""
    transport = ws.transport
    transport.set_protocol(FrameCounter(transport, stats))
    return transport


async def racer_loop(
    racer: list,
    stats: Stats,
    stop: asyncio.Event,
    rate: float | None,
    rng: random.Random,
    measuring: list[bool],
) -> None:
    ws = racer[0]
    next_at = time.perf_counter()
    while not stop.is_set():
        if rate is not None:
            next_at += rng.expovariate(rate)
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        move = choose(racer[1])
        if move is None or racer[1]["status"] != "playing":
            return
        racer[2] += 1
        t0 = time.perf_counter()
        await ws.send(orjson.dumps({"type": "move", "seq": racer[2], **move}))
        while True:
            raw = await ws.recv(decode=False)
            # only an ack or a refusal is parsed (the server writes "type" first): the load
            # client stays light, so it takes less of the cores from the server
            if not raw.startswith((b'{"type":"ack"', b'{"type":"refused"')):
                if measuring[0]:
                    stats.updates += 1
                    if raw.startswith((b'{"type":"leaderboard"', b'{"type":"leaderboard_ch')):
                        stats.boards += 1
                        stats.board_bytes += len(raw)
                continue
            message = orjson.loads(raw)
            kind = message["type"]
            if kind == "ack":
                if measuring[0]:
                    stats.latencies.append(time.perf_counter() - t0)
                    stats.acks += 1
                racer[1] = message["board"]
                break
            if kind == "refused":
                stats.refused += 1
                return


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


async def run_rooms(
    port: int,
    rooms: int,
    racers: int,
    spectators: int,
    seconds: float,
    rate: float | None,
    warmup: float = 1.0,
    ws_spectators: bool = False,
) -> dict:
    made = []
    for i in range(0, rooms, 20):
        made += await asyncio.gather(
            *(make_room(port, racers, spectators) for _ in range(min(20, rooms - i)))
        )
    stats, stop, measuring = Stats(), asyncio.Event(), [False]
    buckets = {}
    rng = random.Random(1)
    tasks = [
        asyncio.create_task(
            racer_loop(r, stats, stop, rate, random.Random(rng.random()), measuring)
        )
        for room in made
        for r in room.racers
    ]
    spect_stats = Stats()
    taken = []  # spectators' transports counted by FrameCounter
    if ws_spectators:
        tasks += [
            asyncio.create_task(count_updates(ws, spect_stats, stop))
            for room in made
            for ws in room.spectators
        ]
    else:
        taken = [count_frames(ws, spect_stats) for room in made for ws in room.spectators]
    await asyncio.sleep(warmup)
    measuring[0] = True
    spect_stats.updates = 0
    buckets = await ack_buckets(port)
    redis_buckets = await ack_buckets(port, "kr_redis_latency_seconds")
    t0 = time.perf_counter()
    cpu = CPU()
    await asyncio.sleep(seconds)
    measuring[0] = False
    elapsed = time.perf_counter() - t0
    cpu_use = cpu.done()
    updates = spect_stats.updates
    after = await ack_buckets(port)
    redis_after = await ack_buckets(port, "kr_redis_latency_seconds")
    stop.set()
    for transport in taken:
        transport.close()
    for room in made:
        for ws in [r[0] for r in room.racers] + ([] if taken else room.spectators):
            await ws.close()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "moves_per_s": stats.acks / elapsed,
        "p50_ms": pct(stats.latencies, 0.50),
        "p99_ms": pct(stats.latencies, 0.99),
        "mean_ms": statistics.fmean(stats.latencies) * 1000 if stats.latencies else 0,
        "server_p50": bucket_quantile(buckets, after, 0.50),
        "server_p99": bucket_quantile(buckets, after, 0.99),
        "redis_p50": bucket_quantile(redis_buckets, redis_after, 0.50),
        "redis_p99": bucket_quantile(redis_buckets, redis_after, 0.99),
        "round_trips_per_s": (redis_after["+Inf"] - redis_buckets["+Inf"]) / elapsed,
        "spectator_updates_per_s": updates / elapsed,
        "racer_updates_per_s": stats.updates / elapsed,
        "refused": stats.refused,
        "connections": rooms * (racers + spectators),
        "server_cpu_us_per_move": sum(v for k, v in cpu_use.items() if k.startswith("cpu_server"))
        * 1e6
        / max(stats.acks / elapsed, 1e-9),
        **cpu_use,
    }


async def daily_player(port: int, challenge: str, i: int) -> list:
    """A daily player: hello, their attempt (a one-seat room), watching the leaderboard."""
    ws = await open_ws(port)
    device = f"bench-device-{i:06d}-{os.getpid()}-padding-xx"
    await ws.send(orjson.dumps({"type": "hello", "device": device}))
    await recv_type(ws, "identity")
    await ws.send(orjson.dumps({"type": "attempt", "challenge": challenge, "name": f"p{i}"}))
    welcome = await recv_type(ws, "welcome")
    await ws.send(orjson.dumps({"type": "watch_board", "challenge": challenge}))
    await recv_type(ws, "leaderboard")
    return [ws, welcome["board"], welcome.get("seq", 0), welcome["room"]["code"]]


async def run_daily(
    port: int, redis_url: str, players: int, seconds: float, rate: float, warmup: float = 3.0
) -> dict:
    import redis as redis_sync

    from klondike_race.service.domain.challenge import daily_id, day_of

    challenge = daily_id(day_of(int(time.time() * 1000)), 1)
    t0 = time.perf_counter()
    racers: list = []
    for i in range(0, players, 50):
        racers += await asyncio.gather(
            *(daily_player(port, challenge, j) for j in range(i, min(players, i + 50)))
        )
    setup_s = time.perf_counter() - t0
    stats, stop, measuring = Stats(), asyncio.Event(), [False]
    rng = random.Random(1)
    tasks = [
        asyncio.create_task(
            racer_loop(r, stats, stop, rate, random.Random(rng.random()), measuring)
        )
        for r in racers
    ]
    await asyncio.sleep(warmup)
    measuring[0] = True
    buckets = await ack_buckets(port)
    t1 = time.perf_counter()
    cpu = CPU()
    await asyncio.sleep(seconds)
    measuring[0] = False
    elapsed = time.perf_counter() - t1
    cpu_use = cpu.done()
    after = await ack_buckets(port)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    # Redis memory of an attempt: its room's keys, plus its share of the deal's keys
    rds = redis_sync.Redis.from_url(redis_url)
    per_room = []
    for r in racers[:: max(1, len(racers) // 50)]:
        keys = list(rds.scan_iter(match=f"room:{{{r[3]}}}*", count=1000))
        per_room.append(sum(rds.memory_usage(k, samples=0) or 0 for k in keys))
    base = f"ch:{challenge}:0"
    shared = sum(rds.memory_usage(f"{base}:{k}", samples=0) or 0 for k in ("board", "rows", "att"))
    n = max(1, rds.zcard(f"{base}:board"))
    rds.close()
    # at once: a player whose game ended stopped reading, and its close waits for the
    # server's close frame behind what it left unread (close_timeout, 10 s)
    await asyncio.gather(*(r[0].close() for r in racers))
    return {
        "players": players,
        "setup_s": setup_s,
        "moves_per_s": stats.acks / elapsed,
        "p50_ms": pct(stats.latencies, 0.50),
        "p99_ms": pct(stats.latencies, 0.99),
        "server_p99": bucket_quantile(buckets, after, 0.99),
        "board_frames_per_s": stats.boards / elapsed,
        "boards_per_watcher_min": stats.boards / elapsed / players * 60,
        "board_frame_kb": stats.board_bytes / max(1, stats.boards) / 1024,
        "refused": stats.refused,
        "redis_room_b": statistics.median(per_room),
        "redis_board_b_per_player": shared / n,
        **cpu_use,
    }


async def run_echo(port: int, connections: int, seconds: float, rate: float | None = None) -> dict:
    """The same-loop echo: each connection sends a move-sized message and waits for it to
    come back, at once (saturated) or at ``rate`` a second at random (exponential)
    intervals (open loop, as open-1000's racers: the floor of a message's cost there)."""
    payload = orjson.dumps(
        {"type": "move", "seq": 1, "from": "col3", "to": "foundation", "count": 1}
    )
    conns = [await open_ws(port) for _ in range(connections)]
    count, stop, latencies = [0], asyncio.Event(), []
    seeds = random.Random(1)

    async def loop(ws) -> None:
        rng = random.Random(seeds.random())
        next_at = time.perf_counter()
        while not stop.is_set():
            if rate is not None:
                next_at += rng.expovariate(rate)
                delay = next_at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            t0 = time.perf_counter()
            await ws.send(payload)
            await ws.recv()
            count[0] += 1
            latencies.append(time.perf_counter() - t0)

    tasks = [asyncio.create_task(loop(ws)) for ws in conns]
    await asyncio.sleep(1.0)
    count[0], latencies[:] = 0, []
    t0 = time.perf_counter()
    cpu = CPU()
    await asyncio.sleep(seconds)
    elapsed = time.perf_counter() - t0
    done = count[0]
    cpu_use = cpu.done()
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for ws in conns:
        await ws.close()
    return {
        "msgs_per_s": done / elapsed,
        "p50_ms": pct(latencies, 0.5),
        "p99_ms": pct(latencies, 0.99),
        "server_cpu_us_per_msg": 1e6 * cpu_use["cpu_server"] * elapsed / max(done, 1),
        **cpu_use,
    }


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of a process, or of this one."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CPU:
    """CPU use of the server, Redis and this load client over a measured window."""

    pids: ClassVar[dict[str, int | None]] = {}

    def __init__(self) -> None:
        self.start = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self.t0 = time.perf_counter()

    def done(self) -> dict:
        elapsed = time.perf_counter() - self.t0
        return {
            f"cpu_{name}": (cpu_seconds(pid) - self.start[name]) / elapsed
            for name, pid in self.pids.items()
        }


async def ack_buckets(
    port: int, name: str = "kr_ack_latency_seconds", labels: str = ""
) -> dict[str, int]:
    """A histogram of the server's own (cumulative bucket counts) from /metrics; of a
    labelled one, the series of ``labels`` (as /metrics writes them: 'generation="0"')."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    text = (await reader.read()).decode()
    writer.close()
    out = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket{{{labels + ',' if labels else ''}le="):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            out[bound] = int(float(line.rsplit(" ", 1)[1]))
    return out


def bucket_quantile(before: dict[str, int], after: dict[str, int], q: float) -> str:
    """The histogram bucket holding quantile q of the observations between two scrapes."""
    total = after["+Inf"] - before.get("+Inf", 0)
    if not total:
        return "n/a"
    for bound, count in after.items():
        if count - before.get(bound, 0) >= q * total:
            return f"<={float(bound) * 1000:g}ms" if bound != "+Inf" else ">2.5s"
    return ">2.5s"


def within(before: dict[str, int], after: dict[str, int], bound: str) -> str:
    """The share of a histogram's observations between two scrapes at most ``bound``."""
    total = after["+Inf"] - before.get("+Inf", 0)
    return f"{100 * (after[bound] - before.get(bound, 0)) / total:.1f}%" if total else "n/a"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def run_memory(port: int, pid: int, n: int) -> dict:
    await asyncio.sleep(0.5)
    before = rss_kb(pid)
    conns = []
    for i in range(0, n, 100):
        conns += await asyncio.gather(*(open_ws(port) for _ in range(min(100, n - i))))
    for ws in conns:  # one round trip each, so every connection is fully set up
        await ws.send(b'{"type":"ping"}')
    for ws in conns:
        await ws.recv()
    await asyncio.sleep(1.0)
    after = rss_kb(pid)
    for ws in conns:
        await ws.close()
    return {
        "connections": n,
        "rss_before_kb": before,
        "rss_after_kb": after,
        "kb_per_connection": (after - before) / n,
    }


# ---- main --------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("load", "server"), default="load")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--echo-port", type=int, default=0)
    parser.add_argument("--redis", default=None, help="use this Redis (default: start one)")
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument("--uvloop", action="store_true", help="run the server on uvloop")
    parser.add_argument(
        "--client-uvloop",
        action="store_true",
        help="run this load client on uvloop (a lighter client leaves more CPU to the server)",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the server on a core of its own; the load client and Redis on the others",
    )
    parser.add_argument("--scale", type=int, default=1, help="saturation: connections x N")
    parser.add_argument(
        "--replica-acks",
        type=int,
        default=0,
        help="start a replica and acknowledge a move only once it holds it (KR_REPLICA_ACKS)",
    )
    parser.add_argument(
        "--appendfsync",
        choices=("everysec", "always", "no"),
        default="everysec",
        help="the started Redis' (and replica's) appendfsync",
    )
    parser.add_argument("--racers", type=int, default=None, help="open loop: racers (1000)")
    parser.add_argument(
        "--ws-spectators",
        action="store_true",
        help="spectators read with websockets' recv() (before: the frames counted raw)",
    )
    parser.add_argument("--rate", type=float, default=2.0, help="open loop: moves/s per racer")
    parser.add_argument("--players", type=int, default=None, help="daily-5000: players (5000)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the ports (SO_REUSEPORT), as `serve --workers N`",
    )
    args = parser.parse_args()
    if args.pin:
        # the server on the first core, this load client and its redis-server on the rest
        cores = list(range(os.cpu_count() or 1))  # not the affinity: the server inherits ours
        if args.role == "server":
            os.sched_setaffinity(0, cores[:1])
        elif len(cores) > 1:
            os.sched_setaffinity(0, cores[1:])
    if args.role == "server":
        if args.uvloop:
            import uvloop

            uvloop.run(serve_role(args))
        else:
            asyncio.run(serve_role(args))
        return 0
    if args.client_uvloop:
        import uvloop

        return uvloop.run(load_main(args))
    return asyncio.run(load_main(args))


def start_server(
    args: argparse.Namespace, port: int, echo_port: int, url: str
) -> subprocess.Popen[str]:
    """One server process (``--role server``); it prints "ready" once listening."""
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--role",
            "server",
            "--port",
            str(port),
            "--echo-port",
            str(echo_port),
            "--redis",
            url,
            "--workers",
            str(args.workers),
            *(["--uvloop"] if args.uvloop else []),
            *(["--pin"] if args.pin else []),
            *(["--replica-acks", str(args.replica_acks)] if args.replica_acks else []),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{ROOT}"},  # this checkout
    )


async def load_main(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT / "server"))
    from klondike_race.service.embedded import EmbeddedRedis, free_port

    # The load client's own collections were pauses charged to the server's latency
    # (with Python's defaults, full collections of 100-155 ms over 2,672 connections).
    gc_pauses = watch_gc(os.environ.get("KR_BENCH_CLIENT_GC"))
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    only = set(args.only.split(",")) if args.only else None
    redis = None
    url = args.redis
    tmp = tempfile.TemporaryDirectory(prefix="kr-bench-")
    replica = None
    if url is None:
        redis = EmbeddedRedis(Path(tmp.name) / "redis", appendfsync=args.appendfsync).start()
        url = redis.url
        if args.replica_acks:
            replica = EmbeddedRedis(
                Path(tmp.name) / "replica",
                appendfsync=args.appendfsync,
                extra=("--replicaof", "127.0.0.1", str(redis.port)),
            ).start()
    port, echo_port = free_port(), free_port()
    servers = [start_server(args, port, echo_port, url) for _ in range(args.workers)]
    server = servers[0]
    for s in servers:
        assert s.stdout is not None
        if s.stdout.readline().strip() != "ready":
            print("server did not start", file=sys.stderr)
            return 1
    CPU.pids = {"redis": redis.process.pid if redis else None, "client": None}
    for i, s in enumerate(servers):
        CPU.pids["server" if i == 0 else f"server{i + 1}"] = s.pid
    if redis is None:
        del CPU.pids["redis"]
    print(
        f"python {sys.version.split()[0]}, server loop {'uvloop' if args.uvloop else 'asyncio'}, "
        f"load client loop {'uvloop' if args.client_uvloop else 'asyncio'}, "
        f"redis appendonly=yes "
        f"appendfsync={args.appendfsync if redis else '(given Redis)'}, "
        f"replica acks={args.replica_acks}, server processes={args.workers}, "
        f"cores={os.cpu_count()}"
    )

    def want(name: str) -> bool:
        return only is None or name in only

    results: dict = {}
    try:
        if want("memory"):
            results["memory"] = await run_memory(port, server.pid, 200 if args.quick else 2000)
            print("memory   ", _fmt(results["memory"]), flush=True)
        if want("echo"):
            results["echo"] = await run_echo(
                echo_port, args.scale * (96 if not args.quick else 24), seconds
            )
            print("echo     ", _fmt(results["echo"]), flush=True)
        if want("open-echo"):
            racers = args.racers or (200 if args.quick else 1000)
            results["open-echo"] = await run_echo(echo_port, racers, seconds, args.rate)
            print("open-echo", _fmt(results["open-echo"]), flush=True)
        if want("sat-3+5"):
            rooms = args.scale * (8 if args.quick else 32)
            results["sat-3+5"] = await run_rooms(
                port, rooms, 3, 5, seconds, None, ws_spectators=args.ws_spectators
            )
            print("sat-3+5  ", _fmt(results["sat-3+5"]), flush=True)
        if want("sat-1v1"):
            rooms = args.scale * (12 if args.quick else 48)
            results["sat-1v1"] = await run_rooms(port, rooms, 2, 0, seconds, None)
            print("sat-1v1  ", _fmt(results["sat-1v1"]), flush=True)
        if want("open-1000"):
            racers = args.racers or (200 if args.quick else 1000)
            results["open-1000"] = await run_rooms(
                port, racers // 2, 2, 0, seconds, args.rate, warmup=2.0
            )
            print("open-1000", _fmt(results["open-1000"]), flush=True)
        if want("open-3+5"):
            racers = args.racers or (201 if args.quick else 1002)
            results["open-3+5"] = await run_rooms(
                port,
                racers // 3,
                3,
                5,
                seconds,
                args.rate,
                warmup=2.0,
                ws_spectators=args.ws_spectators,
            )
            print("open-3+5 ", _fmt(results["open-3+5"]), flush=True)
        if want("daily-5000"):
            players = args.players or (500 if args.quick else 5000)
            results["daily-5000"] = await run_daily(port, url, players, seconds, 0.5)
            print("daily-5000", _fmt(results["daily-5000"]), flush=True)
        if "echo" in results:
            echo = results["echo"]
            echo_cpu = echo["msgs_per_s"] / max(echo["cpu_server"], 1e-9)
            for name in ("sat-3+5", "sat-1v1"):
                if name in results:
                    r = results[name]
                    per_cpu = r["moves_per_s"] / max(r["cpu_server"], 1e-9)
                    print(
                        f"{name}: {r['moves_per_s']:.0f} durable moves/s = "
                        f"{r['moves_per_s'] / echo['msgs_per_s']:.1%} of the same-loop echo "
                        f"ceiling ({echo['msgs_per_s']:.0f} msg/s); per server CPU second: "
                        f"{per_cpu:.0f} moves vs {echo_cpu:.0f} echoes = "
                        f"{per_cpu / echo_cpu:.1%}"
                    )
    finally:
        for s in servers:
            s.send_signal(signal.SIGTERM)
        for s in servers:
            try:
                s.wait(30)
            except subprocess.TimeoutExpired:
                s.kill()
            assert s.stdout is not None
            s.stdout.close()
        if replica is not None:
            replica.stop()
        if redis is not None:
            redis.stop()
        tmp.cleanup()
        print(f"load client gc: {gc_pauses()}", file=sys.stderr, flush=True)
    return 0


def _fmt(d: dict) -> str:
    return "  ".join(
        f"{k}={v:.0%}"
        if k.startswith("cpu_")
        else f"{k}={v:.1f}"
        if isinstance(v, float)
        else f"{k}={v}"
        for k, v in d.items()
    )


if __name__ == "__main__":
    sys.exit(main())

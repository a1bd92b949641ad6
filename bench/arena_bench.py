"""Arena benchmark: prints figures (docs/benchmarks.md), it is not a timed test.

    .venv/bin/python bench/arena_bench.py                      # 200 players, 60 s
    .venv/bin/python bench/arena_bench.py --players 1000 --seconds 120

One server process (``klondike-race serve``, dev mode, its clock put 10 s into a daily
arena of races of two, two hours long) on its own redis-server, and this process as the
players: each says hello, joins the arena, and in every race it is paired into makes a
move about every ``1/rate`` s (a card home, else draw, else recycle: server_bench's bot)
and resigns after ``--moves`` moves, so that races end and players are paired again. The
rates (CPU, frames) are over the ``--seconds`` of the run; the races still on then finish
(a player stuck past ``LAST_RACE_S`` more, or twice a race's planned length, is an
error). The players join at once, or each at a random moment of the first
``--join-over`` seconds: joined together, their races end together, and the server pairs
them in cohorts. It prints:

- pairing: from the end of a player's race (its ``room`` event ``finished``, once both
  games are over) to the player's next ``arena_race``, p50/p99 (the server pairs every
  second);
- acks: a move's acknowledgement latency, p50/p99, as the players measure it and as the
  server does (``kr_ack_latency_seconds``);
- garbage collections: the server's own (``kr_gc_pause_seconds``), by generation: how
  many, their p99 and longest (as histogram buckets), and how many took over 25 ms (a
  collection holds every move waiting for its ack);
- CPU, as shares of one core: the server, its solver workers (its descendants: the races'
  analyses, the arena's pool of certified deals), Redis, and the players (this process);
  on a machine of 2 cores they compete;
- per race ended in the window (its two players' ``finished``): the server's CPU and
  Redis's commands (``total_commands_processed``), all of the window's work included;
- tables: the table's frames (``arena`` whole, ``arena_changes``, ``arena_you``) per player
  per second, their mean size, and the table's bytes per player per second;
- Redis: memory used per arena player and per race counted (``INFO memory``'s
  ``used_memory`` before the players join and at the end, over the counts), with the
  races' own rooms included (they are kept ``KR_KEEP_FINISHED_S``); and the arena's own
  keys (``MEMORY USAGE`` of each: what a finished arena keeps, ``KR_KEEP_DAILY_S``);
- deals: how many of the races counted were on a certified deal of the arena's pool
  (node/arena_deals.py; the room's ``winnable_only``), and the pool's size at the end;
- with ``--certify S``: the solver's certification rate on this machine, S seconds per
  draw mode, as a node fills a pool (one worker, a fresh random seed a search, the
  budget ``--budget``, never spread): candidates and proven wins per second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import redis
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from klondike_race.service.domain import arena as A
from klondike_race.service.embedded import EmbeddedRedis, free_port
from klondike_race.solver.pool import SolverPool
from server_bench import CPU, ack_buckets, bucket_quantile, choose, cpu_seconds, within

DAY_MS = 86_400_000
SCHEDULE = "bench every=day at=00:00 minutes=120 size=2 time_limit=300 draw=1\n"
TABLE_FRAMES = ("arena", "arena_changes", "arena_you")  # what the table sends
CLOSED = "(closed)"  # a player's inbox: the connection closed
LAST_RACE_S = 60  # after the run, how long the races still on may take to finish
PAUSES = "kr_gc_pause_seconds"  # the server's garbage collections, by generation


def pauses(before: list[dict[str, int]], after: list[dict[str, int]]) -> str:
    """Each generation's collections between two scrapes: how many, the bucket of their
    p99 and of the longest, and how many took over 25 ms (the ack goal)."""
    out = []
    for generation, (b, a) in enumerate(zip(before, after, strict=True)):
        n = a["+Inf"] - b.get("+Inf", 0)
        over = n - (a["0.025"] - b.get("0.025", 0))
        out.append(
            f"generation {generation}: {n}, p99 {bucket_quantile(b, a, 0.99)}, "
            f"the longest {bucket_quantile(b, a, 1.0)}, {over} over 25 ms"
        )
    return "; ".join(out)


class Tally:
    def __init__(self) -> None:
        self.pairing: list[float] = []
        self.acks: list[float] = []
        self.by_seq: dict[int, list[float]] = {}
        self.frames: dict[str, int] = dict.fromkeys(TABLE_FRAMES, 0)
        self.frame_bytes: dict[str, int] = dict.fromkeys(TABLE_FRAMES, 0)
        self.races = 0
        self.errors: list[str] = []


async def player(
    port: int, arena: str, args: argparse.Namespace, tally: Tally, stop: float, n: int
) -> None:
    await asyncio.sleep(random.uniform(0, args.join_over))
    # each player from an address of its own, as the server behind a balancer sees them
    # (players of one address are paired apart and their races rated for nobody)
    at = {"X-Forwarded-For": f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"}
    url = f"ws://127.0.0.1:{port}/ws"
    async with connect(url, compression=None, max_size=None, additional_headers=at) as ws:

        async def send(kind: str, **fields: object) -> None:
            await ws.send(orjson.dumps({"type": kind, **fields}).decode())

        inbox: asyncio.Queue[dict] = asyncio.Queue()

        async def read() -> None:
            try:
                async for raw in ws:
                    m = orjson.loads(raw)
                    if m["type"] in TABLE_FRAMES:
                        tally.frames[m["type"]] += 1
                        tally.frame_bytes[m["type"]] += len(raw)
                        continue
                    await inbox.put(m)
            except ConnectionClosed:
                pass
            finally:  # the server closed the connection: the player stops
                await inbox.put({"type": CLOSED})

        reader = asyncio.create_task(read())

        async def until(*kinds: str) -> dict:
            while True:
                m = await inbox.get()
                if m["type"] in kinds:
                    return m
                if m["type"] == CLOSED:
                    raise ConnectionError("closed by the server")
                if m["type"] == "error":
                    tally.errors.append(str(m))

        ended: float | None = None
        try:
            await send("hello", device=secrets.token_urlsafe(24))
            await until("identity")
            await send("join_arena", arena=arena, name=f"bot{random.randrange(10**6)}")
            while time.monotonic() < stop:
                try:
                    await asyncio.wait_for(until("arena_race"), stop - time.monotonic())
                except TimeoutError:
                    break
                if ended is not None:
                    tally.pairing.append(time.monotonic() - ended)
                welcome = await until("welcome")
                board = welcome.get("board")
                if welcome["room"]["phase"] != "racing":
                    board = (await until("start"))["board"]
                seq = 0
                for _ in range(args.moves):
                    await asyncio.sleep(random.expovariate(args.rate))
                    step = choose(board)
                    if step is None:
                        break
                    seq += 1
                    t0 = time.perf_counter()
                    await send("move", seq=seq, **step)
                    ack = await until("ack", "refused")
                    tally.acks.append(time.perf_counter() - t0)
                    tally.by_seq.setdefault(min(seq, 3), []).append(time.perf_counter() - t0)
                    if ack["type"] != "ack":
                        break
                    board = ack["board"]
                await send("resign", seq=seq + 1)
                await until("ack", "refused")
                while (await until("room"))["room"]["phase"] != "finished":
                    pass
                ended = time.monotonic()
                tally.races += 1
        except (ConnectionError, ConnectionClosed) as err:
            tally.errors.append(str(err))
        finally:
            reader.cancel()


def descendants(pid: int) -> list[int]:
    """A process's children, theirs and so on (the solver's workers under the server);
    a process gone meanwhile has none."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                out += [int(child), *descendants(int(child))]
    return out


def cpu_of(pids: list[int]) -> float:
    """CPU seconds of the processes still there."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main_async(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="kr-arena-"))
    store = EmbeddedRedis(tmp / "redis").start()
    schedule = tmp / "arenas.txt"
    schedule.write_text(SCHEDULE)
    now = time.time_ns() // 1_000_000
    starts = (now // DAY_MS + 1) * DAY_MS  # the next midnight UTC
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": store.url,
        "KR_PORT": str(port),
        "KR_DEV": "1",
        "KR_CLOCK_OFFSET_MS": str(starts + 10_000 - now),
        "KR_ARENAS_FILE": str(schedule),
        "KR_TRUST_FORWARDED": "1",  # each player's X-Forwarded-For (``player``)
        "KR_COUNTDOWN_MS": "500",
        "KR_RATE": "50",
        "KR_BURST": "100",
        "KR_LOG_LEVEL": "warning",
    }
    profile = os.environ.get("KR_BENCH_PROFILE")  # a file: the server runs under cProfile
    command = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else [])]
    command += ["-m", "klondike_race.cli", "serve"]
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert server.stdout is not None
        if not server.stdout.readline():  # "Klondike Race is running: …"
            print("the server did not start", file=sys.stderr)
            return 1
        rds = redis.Redis.from_url(store.url)
        before = int(rds.info("memory")["used_memory"])
        commands_before = int(rds.info("stats")["total_commands_processed"])
        acks_before = await ack_buckets(port)
        pauses_before = [await ack_buckets(port, PAUSES, f'generation="{g}"') for g in range(3)]
        assert store.process is not None
        CPU.pids = {"server": server.pid, "redis": store.process.pid, "players": None}
        shares = CPU()
        workers_before = cpu_of(descendants(server.pid))
        arena = A.arena_id("bench", starts)
        tally = Tally()
        t0 = time.monotonic()
        stop = t0 + args.seconds
        players = [
            asyncio.create_task(player(port, arena, args, tally, stop, n))
            for n in range(args.players)
        ]
        await asyncio.wait(players, timeout=args.seconds)
        # the rates are the window's; the races still on finish after it
        window = time.monotonic() - t0
        cpu = shares.done()  # cpu_server, cpu_redis, cpu_players (this process)
        # the solver's workers (started on first use: those of the window are counted whole)
        workers_cpu = (cpu_of(descendants(server.pid)) - workers_before) / window
        frames, frame_bytes = dict(tally.frames), dict(tally.frame_bytes)
        ended = tally.races / 2  # races of two: each player counts its race's end
        commands = int(rds.info("stats")["total_commands_processed"]) - commands_before
        last = max(LAST_RACE_S, 2 * args.moves / args.rate)
        _, stuck = await asyncio.wait(players, timeout=last)
        for task in stuck:
            task.cancel()
        if stuck:
            tally.errors.append(f"{len(stuck)} players still racing {last:g} s after the end")
        elapsed = time.monotonic() - t0
        used = int(rds.info("memory")["used_memory"]) - before
        own = sum(int(rds.memory_usage(k, samples=0) or 0) for k in rds.keys(f"arena:{{{arena}}}*"))
        acks_after = await ack_buckets(port)
        pauses_after = [await ack_buckets(port, PAUSES, f'generation="{g}"') for g in range(3)]
        counted = rds.scard(f"arena:{{{arena}}}:counted")
        every = 1 / args.rate
        print(
            f"{args.players} players, {window:.0f} s (their last races over at {elapsed:.0f} s), "
            f"races of 2, a move every {every:.1f} s, {args.moves} moves then resign, "
            f"joined over {args.join_over:g} s"
        )
        print(
            f"races counted {counted}; pairing p50 {pct(tally.pairing, 0.5):.2f} s, "
            f"p99 {pct(tally.pairing, 0.99):.2f} s ({len(tally.pairing)} re-pairings)"
        )
        print(
            f"acks {len(tally.acks)}: p50 {1000 * pct(tally.acks, 0.5):.1f} ms, "
            f"p99 {1000 * pct(tally.acks, 0.99):.1f} ms; the server's own (frame read to ack "
            f"written) p50 {bucket_quantile(acks_before, acks_after, 0.5)}, "
            f"p99 {bucket_quantile(acks_before, acks_after, 0.99)}, "
            f"{within(acks_before, acks_after, '0.025')} within 25 ms"
        )
        print(f"the server's garbage collections ({PAUSES}): {pauses(pauses_before, pauses_after)}")
        print(
            f"CPU: server {100 * cpu['cpu_server']:.0f}%, its solver workers "
            f"{100 * workers_cpu:.0f}%, Redis {100 * cpu['cpu_redis']:.0f}%, the players' "
            f"process {100 * cpu['cpu_players']:.0f}% "
            f"(of one core; this machine has {os.cpu_count()})"
        )
        print(
            f"per race ended in the window ({ended:.0f}, {ended / window:.1f} a second): "
            f"server CPU {1000 * cpu['cpu_server'] * window / max(1, ended):.1f} ms, Redis "
            f"commands {commands / max(1, ended):.0f} (moves and table pushes included)"
        )
        each = max(1, args.players) * window
        kinds = [
            f"{kind} {frames[kind] / each:.2f} of "
            f"{frame_bytes[kind] / max(1, frames[kind]) / 1024:.2f} KiB"
            for kind in TABLE_FRAMES
            if frames[kind]
        ]
        rate = sum(frame_bytes.values()) / each / 1024
        print(f"table frames per player per second: {', '.join(kinds)}; {rate:.2f} KiB/s")
        print(
            f"redis used_memory +{used / 1024:.0f} KiB: {used / args.players / 1024:.1f} KiB a "
            f"player, {used / max(1, counted) / 1024:.1f} KiB a race counted (its room included); "
            f"the arena's own keys {own / 1024:.0f} KiB, {own / args.players:.0f} bytes a player"
        )
        for k, v in sorted(tally.by_seq.items()):  # a race's first moves apart
            name = f"{k}+" if k == 3 else str(k)
            p50, p99, top = 1000 * pct(v, 0.5), 1000 * pct(v, 0.99), 1000 * max(v)
            print(f"  move {name} of a race: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {top:.0f} ms")
        codes = [c.decode() for c in rds.smembers(f"arena:{{{arena}}}:counted")]
        states = [rds.hget(f"room:{{{c}}}", "state") for c in codes]
        certified = sum(1 for st in states if st and orjson.loads(st).get("winnable_only"))
        pooled = rds.llen(f"arena:{{{arena}}}:deals")
        print(
            f"deals: {certified} of {len(codes)} races counted certified, "
            f"{pooled} pooled at the end"
        )
        if tally.errors:
            print(f"errors: {len(tally.errors)}, first {tally.errors[0]}")
        print(f"server log: {tmp / 'server.log'}")
        return 0
    finally:
        server.terminate()
        server.wait(30)
        log.close()
        store.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=2.0, help="moves per second per player")
    parser.add_argument("--moves", type=int, default=20, help="moves a race, then resign")
    parser.add_argument(
        "--join-over", type=float, default=0.0, help="seconds over which the players join"
    )
    parser.add_argument(
        "--certify", type=float, default=0.0, help="seconds per draw mode: the certification rate"
    )
    parser.add_argument(
        "--budget", type=float, default=0.25, help="per candidate (KR_SOLVER_ARENA_S)"
    )
    args = parser.parse_args()
    if args.certify:
        asyncio.run(certify_rate(args.certify, args.budget))
    return asyncio.run(main_async(args)) if args.players else 0


async def certify_rate(seconds: float, budget: float) -> None:
    """Candidates searched and wins proven per second, one worker, as a node fills a pool."""
    async with SolverPool(1) as pool:
        await pool.solve({"seed": "warm-up"}, {"draw": 1}, None, max_seconds=budget)
        for draw in (1, 3):
            tried = won = 0
            slowest = 0.0
            t0 = time.monotonic()
            while time.monotonic() - t0 < seconds:
                t = time.monotonic()
                out = await pool.solve(
                    {"seed": secrets.token_hex(8)},
                    {"draw": draw},
                    None,
                    max_seconds=budget,
                    spread=False,
                )
                slowest = max(slowest, time.monotonic() - t)
                tried += 1
                won += out["result"] == "win"
            spent = time.monotonic() - t0
            print(
                f"certify Draw {draw}, {budget:g} s a candidate: {tried / spent:.0f} candidates "
                f"a second, {won / spent:.0f} proven wins a second ({won}/{tried} won), "
                f"slowest {1000 * slowest:.0f} ms"
            )


if __name__ == "__main__":
    sys.exit(main())

"""Whole server processes: SIGKILL mid-race and restart; two nodes sharing one Redis."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time

import orjson
import pytest

from tests.servers import ServerProcess

from .conftest import Client, winnable


async def seat_race(port_a: int, port_b: int, deal: dict) -> tuple[Client, Client]:
    host = await Client.open(port_a)
    welcome = await host.request("create", "welcome", name="host", deal=deal)
    guest = await Client.open(port_b)
    await guest.request("join", "welcome", code=welcome["room"]["code"], name="guest")
    await host.send("ready")
    await guest.send("ready")
    await host.expect("start")
    await guest.expect("start")
    return host, guest


async def finished(client: Client) -> dict:
    room = await client.expect("room")
    while room["room"]["phase"] != "finished":
        room = await client.expect("room")
    return room


@pytest.mark.parametrize("embedded", [False, True], ids=["redis-url", "embedded-redis"])
async def test_sigkill_mid_race_loses_nothing_acknowledged(redis_url, tmp_path, embedded) -> None:
    ref = winnable(draw=1, index=5)
    url = None if embedded else redis_url
    server = ServerProcess(url, data_dir=tmp_path / "data").start()
    try:
        host, guest = await seat_race(server.port, server.port, {"cards": ref["cards"]})
        last = None
        for step in ref["line"][:40]:
            last = await host.move(step)
            assert last["type"] == "ack"
        for _ in range(4):
            assert (await guest.move("draw"))["type"] == "ack"
        server.kill()  # SIGKILL: no shutdown at all
        server = ServerProcess(url, port=server.port, data_dir=tmp_path / "data").start()
        host2 = await Client.open(server.port)
        welcome = await host2.request("resume", "welcome", token=host.token)
        assert welcome["seq"] == 40 and welcome["board"] == last["board"]
        guest2 = await Client.open(server.port)
        welcome = await guest2.request("resume", "welcome", token=guest.token)
        assert welcome["seq"] == 4
        assert welcome["progress"]["p1"]["moves"] == 40
        # the race goes on to its end
        for i, step in enumerate(ref["line"][40:], start=41):
            answer = await host2.move(step, seq=i)
            assert answer["type"] == "ack", answer
        assert answer["board"]["status"] == "won"
        assert (await guest2.request("resign", "ack", seq=5))["type"] == "ack"
        room = await finished(guest2)
        assert room["leaderboard"][0]["foundation"] == 52
    finally:
        assert server.stop() == 0  # SIGTERM: a graceful exit


def test_a_data_folder_serves_one_server_at_a_time(tmp_path) -> None:
    """Two redis-servers must not append to one AOF: a second `serve` on a folder in use
    waits for its lock (an earlier run's redis-server may be finishing), then refuses."""
    import subprocess
    import sys

    first = ServerProcess(None, data_dir=tmp_path / "data").start()
    try:
        env = {**first.env, "KR_PORT": "0"}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "klondike_race.cli", "serve"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1, done
        assert "another server uses the data folder" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and time.monotonic() - started >= 9
    finally:
        assert first.stop() == 0
    # stopped, the folder is free again: the next server starts on it at once
    again = ServerProcess(None, data_dir=tmp_path / "data").start()
    assert again.stop() == 0


async def test_two_nodes_serve_one_room(redis_url) -> None:
    ref = winnable(draw=1, index=7)
    a = ServerProcess(redis_url).start()
    b = ServerProcess(redis_url).start()
    try:
        host, guest = await seat_race(a.port, b.port, {"cards": ref["cards"]})
        code = host.seen[0]["room"]["code"]
        watch_a = await Client.open(a.port)
        watch_b = await Client.open(b.port)
        await watch_a.request("watch", "welcome", code=code)
        await watch_b.request("watch", "welcome", code=code)
        count = await host.expect("spectators")
        while count["count"] != 2:
            count = await host.expect("spectators")
        for step in ref["line"][:30]:
            assert (await host.move(step))["type"] == "ack"
        for _ in range(5):
            assert (await guest.move("draw"))["type"] == "ack"
        # node B's racer sees node A's racer's progress (no board); spectators see boards
        progress = [m for m in await guest.drain(0.3) if m["type"] == "progress"]
        seen = [m for m in guest.seen if m["type"] == "progress" and m["player"] == "p1"]
        assert seen and seen[-1]["progress"]["moves"] == 30 and "board" not in seen[-1]
        for w in (watch_a, watch_b):
            await w.drain(0.3)
            p1 = [m for m in w.seen if m["type"] == "progress" and m["player"] == "p1"]
            p2 = [m for m in w.seen if m["type"] == "progress" and m["player"] == "p2"]
            assert len(p1) == 30 and len(p2) == 5
            assert p1[-1]["board"]["moves"] == 30 and p2[-1]["board"]["moves"] == 5
            versions = [m["v"] for m in w.seen if "v" in m and m["type"] != "welcome"]
            assert versions == sorted(versions) and len(set(versions)) == len(versions)
        # node B plays node A's moves on its own copies: the very same boards
        boards_a, boards_b = (
            {m["v"]: m["board"] for m in w.seen if m["type"] == "progress"}
            for w in (watch_a, watch_b)
        )
        assert len(boards_a) == 35 and boards_a == boards_b
        del progress
        # the host moves over to node B mid-race, and finishes there
        await host.ws.close()
        moved = await Client.open(b.port)
        welcome = await moved.request("resume", "welcome", token=host.token)
        assert welcome["seq"] == 30
        for i, step in enumerate(ref["line"][30:], start=31):
            assert (await moved.move(step, seq=i))["type"] == "ack"
        assert (await guest.request("resign", "ack", seq=6))["type"] == "ack"
        for c in (moved, guest, watch_a, watch_b):
            room = await finished(c)
            assert [r["player"] for r in room["leaderboard"]] == ["p1", "p2"]
            assert room["room"]["reveal"]["salt"]
        for c in (moved, guest, watch_a, watch_b):
            await c.close()
        # quick match across nodes: one waits on A, the other arrives on B
        first = await Client.open(a.port)
        assert (await first.request("quick", "queued", name="ann"))["type"] == "queued"
        second = await Client.open(b.port)
        welcome = await second.request("quick", "welcome", name="bob")
        matched = await first.expect("welcome")
        assert matched["room"]["code"] == welcome["room"]["code"]
        assert (await first.expect("matched"))["token"]
        for c, entered in ((first, matched), (second, welcome)):
            # a welcome of a race counting down is followed by its start (which may come
            # before the waiting player's `matched`, and was then passed over above)
            since = next(i for i, m in enumerate(c.seen) if m is entered)
            started = any(m["type"] == "start" for m in c.seen[since:])
            if entered["room"]["phase"] != "racing" and not started:
                await c.expect("start")
        assert (await first.move("draw"))["type"] == "ack"
        progress = await second.expect("progress")
        assert progress["player"] == matched["player"] and "board" not in progress
        for c in (first, second):
            await c.close()
    finally:
        assert a.stop() == 0
        assert b.stop() == 0


async def test_a_race_on_uvloop(redis_url) -> None:
    """`serve --uvloop` (KR_UVLOOP, the `fast` extra, which the tests install): a race
    to its end, every move acknowledged (the group commit's own Redis connection once
    refused uvloop's transport, and every move failed)."""
    import uvloop  # noqa: F401  (installed: the server takes the uvloop path)

    ref = winnable(draw=1, index=3)
    server = ServerProcess(redis_url, KR_UVLOOP="1").start()
    try:
        host, guest = await seat_race(server.port, server.port, {"cards": ref["cards"]})
        for step in ref["line"]:
            answer = await host.move(step)
            assert answer["type"] == "ack", answer
        assert answer["board"]["status"] == "won"
        assert (await guest.request("resign", "ack", seq=1))["type"] == "ack"
        room = await finished(guest)
        assert room["leaderboard"][0]["foundation"] == 52
    finally:
        assert server.stop() == 0
    assert not any("uvloop" in line or "error" in line for line in server.output)


async def test_sigterm_closes_connections_with_1001_and_exits_cleanly(redis_url) -> None:
    import asyncio

    from websockets.exceptions import ConnectionClosed

    server = ServerProcess(redis_url).start()
    try:
        c = await Client.open(server.port)
        assert (await c.request("ping", "pong"))["type"] == "pong"
        server.process.terminate()  # SIGTERM
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(c.ws.recv(), 10)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1001
    finally:
        assert server.stop() == 0


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid`` now, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.add(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_solver_workers_die_with_a_sigkilled_node(redis_url) -> None:
    server = ServerProcess(redis_url).start()
    try:
        solo = await Client.open(server.port)
        await solo.request("create", "welcome", name="ann", practice=True)
        # the first search starts the solver's processes: on a loaded machine that and
        # the hint's budget (3 s) may take longer than a plain request's 5 s
        answer = await solo.request("hint", "hint", timeout=30)
        assert answer["type"] in ("hint", "error")
        assert server.process is not None
        workers = _descendants(server.process.pid)
        assert len(workers) >= 2  # the fork server and a worker at least
        await solo.close()
    finally:
        server.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        await asyncio.sleep(0.1)
    assert not [p for p in workers if _alive(p)]


def _metric(port: int, name: str) -> float:
    """A gauge of one worker, read from its own port's /metrics."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError(f"no {name} on port {port}")


def _worker_pid(port: int) -> int:
    """The process of the worker whose own port is ``port`` (from its environment)."""
    want = f"KR_WORKER_PORT={port}".encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if want in f.read().split(b"\0"):
                        return int(entry)
            except OSError:
                continue
    raise AssertionError(f"no worker on port {port}")


def _ready(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _free_port_pair() -> int:
    """A port whose next one is free too, both below the ephemeral range (32768 up on
    Linux), so that no outgoing connection of this or another test takes one of them
    between this check and the workers' binding (the kernel's free port for bind(0) is
    ephemeral, and a port next to it may be any connection's)."""
    rng = random.Random()
    while True:
        own = rng.randrange(20000, 32000)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", own))
                b.bind(("127.0.0.1", own + 1))
        except OSError:
            continue
        return own


async def test_workers_share_the_port_and_come_back(redis_url) -> None:
    """``serve --workers 2``: two nodes on one port (SO_REUSEPORT), each also on a port of
    its own; connections spread over both; a race across them; a killed worker is
    started again; SIGTERM stops them all."""
    own = _free_port_pair()
    server = ServerProcess(redis_url, KR_WORKERS="2", KR_WORKER_PORTS=str(own)).start()
    try:
        assert "(2 workers)" in "".join(server.output)
        assert _ready(own) and _ready(own + 1)
        clients = [await Client.open(server.port) for _ in range(24)]
        counts = [_metric(p, "kr_connections") for p in (own, own + 1)]
        assert sum(counts) == 24 and min(counts) >= 1, counts  # both took some
        host, guest = await seat_race(server.port, server.port, {"seed": "42"})
        assert (await host.move("draw"))["type"] == "ack"
        assert (await guest.move("draw"))["type"] == "ack"
        for c in [*clients, host, guest]:
            await c.close()
        # a worker killed outright is started again, on its own port too
        pid = _worker_pid(own)
        os.kill(pid, 9)
        deadline = time.monotonic() + 15
        while not _ready(own) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert _ready(own)
        told = [
            orjson.loads(line)
            for line in "".join(server.output).splitlines()
            if "worker exited" in line
        ]
        assert told and told[0]["event"] == "worker exited; starting it again", told
        assert (told[0]["worker"], told[0]["code"], told[0]["level"]) == (0, -9, "warning")
    finally:
        assert server.stop() == 0
    assert not _ready(own) and not _ready(own + 1)

"""/healthz, /metrics and the static root."""

from __future__ import annotations

import asyncio
import gc

import redis.asyncio as aioredis

from tests.conftest import until

from .conftest import Client, start_race


async def get(port: int, path: str) -> tuple[int, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = data.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


async def metrics(port: int) -> dict[str, float]:
    status, text = await get(port, "/metrics")
    assert status == 200
    return {
        name: float(value)
        for name, value in (line.rsplit(" ", 1) for line in text.splitlines())
        if not name.startswith("#")
    }


async def test_a_moves_ack_latency_counts_its_wait_behind_the_connections_earlier_move(
    node, redis_url
) -> None:
    """``kr_ack_latency_seconds`` runs from a move's frame read: a second move sent
    while the first waits for its group commit (Redis's writes held 1 s) waits as long
    in the connection's queue, and its ack's latency says so."""
    racer = (await start_race(node.port))[0]
    before = await metrics(node.port)
    admin = aioredis.Redis.from_url(redis_url)
    try:
        await admin.execute_command("CLIENT", "PAUSE", 1000, "WRITE")
        for seq in (1, 2):  # one after the other, the second before the first's ack
            await racer.send_raw(f'{{"type":"move","seq":{seq},"action":"draw"}}')
        for seq in (1, 2):
            assert (await racer.expect("ack"))["seq"] == seq
    finally:
        await admin.aclose()
    after = await metrics(node.port)
    count, fast = "kr_ack_latency_seconds_count", 'kr_ack_latency_seconds_bucket{le="0.5"}'
    assert after[count] - before.get(count, 0) == 2
    assert after[fast] == before.get(fast, 0)  # both over 0.5 s, the second too


async def test_health_metrics_and_root(node) -> None:
    assert await get(node.port, "/healthz") == (200, "ok\n")
    clients = await start_race(node.port)
    await clients[0].move("draw")
    await clients[0].move({"from": "col1", "to": "col1", "count": 1})
    lines = await metrics(node.port)
    assert lines["kr_connections"] == 2
    assert lines["kr_rooms"] == 1
    assert lines["kr_connections_total"] == 2
    assert lines["kr_moves_accepted_total"] == 1
    assert lines['kr_moves_refused_total{reason="same_pile"}'] == 1
    assert lines["kr_ack_latency_seconds_count"] == 1
    assert lines["kr_redis_latency_seconds_count"] > 0
    # the process's own: memory, CPU, file descriptors, garbage collections
    assert lines["process_resident_memory_bytes"] > 0
    assert lines["process_open_fds"] > 0
    assert "process_cpu_seconds_total" in lines
    assert 'python_gc_collections_total{generation="0"}' in lines
    # each collection's pause, by generation: a full collection is counted in its bucket
    full = 'kr_gc_pause_seconds_count{generation="2"}'
    gc.collect()
    after = await metrics(node.port)
    assert after[full] >= lines[full] + 1
    assert after['kr_gc_pause_seconds_bucket{generation="2",le="+Inf"}'] == after[full]
    assert after['kr_gc_pause_seconds_sum{generation="2"}'] > lines.get(
        'kr_gc_pause_seconds_sum{generation="2"}', 0
    )
    status, body = await get(node.port, "/")
    assert status == 200 and body
    assert (await get(node.port, "/../../etc/passwd"))[0] == 404
    for c in clients:
        await c.close()


async def test_an_unexpected_error_closes_only_that_connection_with_1011(node) -> None:
    import pytest
    from websockets.exceptions import ConnectionClosed

    from .conftest import Client

    async def broken(conn) -> None:
        raise RuntimeError("a bug")

    node.lobby.list_rooms = broken
    bystander = await Client.open(node.port)
    c = await Client.open(node.port)
    await c.send("rooms")
    with pytest.raises(ConnectionClosed) as info:
        await c.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1011
    assert (await bystander.request("ping", "pong"))["type"] == "pong"
    await bystander.close()


async def test_a_spectator_closed_as_too_slow_is_counted(node) -> None:
    """A spectator that stops reading, its backlog past the bound: closed with 1008, and
    ``kr_connections_too_slow_total`` counts it by reason."""
    a, b = await start_race(node.port)
    watcher = await Client.open(node.port)
    await watcher.request("watch", "welcome", code=a.seen[0]["room"]["code"])
    conn = next(c for c in node.connections.conns if c.role == "spectator")
    watcher.ws.transport.pause_reading()  # reads nothing from here on
    big = "x" * 100_000
    for _ in range(1000):
        node.fanout.push((conn.ws,), big)
        await asyncio.sleep(0)
        if conn.ws.slow is not None:
            break
    assert conn.ws.slow == "backlog"
    await until(lambda: conn not in node.connections.conns, 10)
    _, text = await get(node.port, "/metrics")
    assert 'kr_connections_too_slow_total{reason="backlog"} 1.0' in text.splitlines()
    assert node.connections.open == 2  # the racers stay
    watcher.ws.transport.abort()
    for c in (a, b):
        await c.close()


def test_the_service_worker_names_the_shell_of_this_version(tmp_path) -> None:
    """/sw.js carries every client file with its SHA-256 and a version over them: a
    change to any file changes sw.js, which is how a browser finds a new deploy."""
    import hashlib
    import json

    from klondike_race.service.http import Routes

    (tmp_path / "js").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html>")
    (tmp_path / "js" / "app.js").write_text("1;")
    (tmp_path / "sw.js").write_text('const SHELL = "__KR_SHELL__";')
    routes = Routes(tmp_path, lambda: b"", lambda: None)  # type: ignore[arg-type, return-value]

    def worker() -> dict:
        answer = routes.route("/sw.js")
        assert answer.headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert answer.headers["Cache-Control"] == "no-store"
        body = answer.body.decode()
        assert body.startswith("const SHELL = {") and body.endswith("};")
        return json.loads(body[len("const SHELL = ") : -1])

    first = worker()
    assert first["files"] == {
        "index.html": hashlib.sha256(b"<!doctype html>").hexdigest(),
        "js/app.js": hashlib.sha256(b"1;").hexdigest(),
    }
    (tmp_path / "js" / "app.js").write_text("2;")  # a deploy
    second = worker()
    assert second["version"] != first["version"]
    assert second["files"]["js/app.js"] == hashlib.sha256(b"2;").hexdigest()
    manifest = tmp_path / "manifest.webmanifest"
    manifest.write_text("{}")
    assert routes.route("/manifest.webmanifest").headers["Content-Type"] == (
        "application/manifest+json"
    )

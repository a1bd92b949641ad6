"""The websockets internals that fan-out relies on (service/transport.py): if a websockets
release changes them, these tests fail before a server sends a broken frame."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from klondike_race.service import transport
from klondike_race.service.fanout import Fanout
from klondike_race.service.transport import MessageConnection
from tests.conftest import until


async def _pair(**options: Any):
    """A real server connection and the client connected to it (``options``: the
    server's, e.g. ``create_connection``)."""
    accepted: asyncio.Future[ServerConnection] = asyncio.get_running_loop().create_future()

    async def handler(ws: ServerConnection) -> None:
        accepted.set_result(ws)
        await ws.wait_closed()

    server = await serve(handler, "127.0.0.1", 0, compression=None, **options)
    port = server.sockets[0].getsockname()[1]
    client = await connect(f"ws://127.0.0.1:{port}", compression=None)
    return server, await accepted, client


async def test_a_server_connection_has_what_transport_reads() -> None:
    server, ws, client = await _pair()
    try:
        protocol = ws.protocol
        assert isinstance(protocol.writes, list)
        assert protocol.data_to_send() == []  # nothing queued on an idle connection
        assert ws.send_in_progress is None
        assert transport.accepts(ws)
        assert not ws.transport.is_closing()
        assert isinstance(ws.transport.get_write_buffer_size(), int)
        assert transport.queued(ws) == []
        # a control frame queued in the protocol goes out ahead of fan-out's frames
        protocol.send_ping(b"queued")
        assert protocol.writes
        assert transport.write(ws, [transport.frame(b"after")]) is False
        pong = await asyncio.wait_for(client.recv(), 2)
        assert pong == "after"  # the client answered the ping on its own, then got the text
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


async def test_frames_of_every_length_arrive_whole_and_in_order() -> None:
    server, ws, client = await _pair()
    fanout = Fanout(batch_interval=0.02)
    try:
        texts = ["a", "b" * 125, "c" * 126, "d" * 65535, "e" * 65536, "f" * 200_000]
        for i, text in enumerate(texts):
            fanout.push((ws,), text, batched=i % 2 == 1)
        got = [await asyncio.wait_for(client.recv(), 2) for _ in texts]
        assert got == texts
        # websockets' own sends and pings still work between fan-out writes
        await ws.send("own")
        assert await client.recv() == "own"
        assert await asyncio.wait_for(await client.ping(), 2) is not None
        fanout.push((ws,), b'{"after":"ping"}')
        assert await asyncio.wait_for(client.recv(), 2) == '{"after":"ping"}'
    finally:
        fanout.close()
        await client.close()
        server.close()
        await server.wait_closed()


async def test_nothing_is_written_to_a_closed_connection() -> None:
    server, ws, client = await _pair()
    fanout = Fanout()
    await client.close()
    await ws.wait_closed()
    assert not transport.accepts(ws)
    fanout.push((ws,), "late")  # skipped, no error
    await asyncio.sleep(0.01)
    assert not transport.write(ws, [transport.frame(b"late")])
    server.close()
    await server.wait_closed()


def test_two_fanouts_share_nothing() -> None:
    a, b = Fanout(0.05), Fanout(0.0)
    assert a._pending is not b._pending and a._batched is not b._batched
    assert a.batch_interval != b.batch_interval


async def test_batched_writes_are_spread_over_the_interval() -> None:
    """Batched frames for many connections leave phase by phase, each within about the
    interval, not all in one loop turn; an unbatched frame takes its connection's batched
    ones along at once, ahead of itself."""
    from klondike_race.service.fanout import PHASES, phase_of

    pairs = [await _pair() for _ in range(24)]
    interval = 0.4
    tick = interval / PHASES
    loop = asyncio.get_running_loop()

    async def spread() -> tuple[list[float], float, float]:
        """Each connection's arrival time, the longest the loop was kept from running
        meanwhile (a busy machine's stall: senders and receivers share this loop, so
        a stall bunches every arrival after it), and how late it ran in all (each
        phase's flush is timed from the one before, so their lateness adds up)."""
        fanout = Fanout(batch_interval=interval)
        stall = late = 0.0

        async def watch_the_loop() -> None:
            nonlocal stall, late
            while True:
                before = loop.time()
                await asyncio.sleep(0.005)
                over = max(0.0, loop.time() - before - 0.005)
                stall, late = max(stall, over), late + over

        watcher = asyncio.create_task(watch_the_loop())
        try:
            t0 = loop.time()
            fanout.push([ws for _, ws, _ in pairs], "update", batched=True)
            fanout.push([pairs[0][1]], "ack")  # the first connection's: both at once
            first = pairs[0][2]
            assert await asyncio.wait_for(first.recv(), 0.1 + stall) == "update"
            assert await asyncio.wait_for(first.recv(), 0.1 + stall) == "ack"

            async def arrival(client) -> float:
                assert await asyncio.wait_for(client.recv(), 2) == "update"
                return loop.time() - t0

            times = await asyncio.gather(*(arrival(c) for _, _, c in pairs[1:]))
            return list(times), stall, late
        finally:
            watcher.cancel()
            fanout.close()

    try:
        for _ in range(10):  # measured again when the machine stalled the loop
            times, stall, late = await spread()
            if stall < tick / 2:
                break
        # within the interval, and two ticks for the loop's own turns, and how late the
        # loop ran in all (a frame held an extra interval fails unless the loop was late
        # by most of an interval)
        assert max(times) <= interval + 2 * tick + late, (times, stall, late)
        # each phase's connections arrive together, apart from the other phases' (the
        # arrivals split where two are over half a tick apart: the flushes' own lateness
        # adds up over the interval, so the groups are not on a grid of ticks)
        phases = [phase_of(ws) for _, ws, _ in pairs[1:]]
        arrivals = sorted(zip(times, phases, strict=True))
        groups: list[set[int]] = [{arrivals[0][1]}]
        for (before, _), (at, phase) in itertools.pairwise(arrivals):
            if at - before > tick / 2:
                groups.append(set())
            groups[-1].add(phase)
        assert len(groups) >= 3, arrivals  # several phases, one after another
        assert all(len(group) == 1 for group in groups), arrivals
        assert len(groups) == len(set(phases)), arrivals
    finally:
        for server, _, client in pairs:
            await client.close()
            server.close()
            await server.wait_closed()


async def test_an_unbatched_frame_waiting_for_the_turn_s_end_leaves_before_later_batched_ones() -> (
    None
):
    """An unbatched frame (an ack, a room event) waits for the end of the loop turn; a
    batched one pushed after it (another player's progress) waits for its phase's timer.
    When that timer is due in the same turn, after the code that pushed both, its write
    comes first: it must take the unbatched frames still waiting along, ahead of its own
    (a racer got ``progress v13`` before ``v10``, ``v11``, and acks below a progress it
    already had). The timer's turn is made to come right after the pushes, by a wrapper
    of the real flush."""
    from klondike_race.service.fanout import phase_of

    server, ws, client = await _pair()
    fanout = Fanout(batch_interval=0.02)
    real_flush = fanout._flush_batched
    pushed = asyncio.Event()

    def pushes_then_flush() -> None:
        if not pushed.is_set() and fanout._turn == phase_of(ws):
            pushed.set()  # in this turn, ahead of the due timer (as a commit's answer is)
            fanout.push((ws,), "v11 progress", batched=True)
            fanout.push((ws,), "v12 ack")  # takes v11 along; waits for the turn's end
            fanout.push((ws,), "v13 progress", batched=True)
        real_flush()

    fanout._flush_batched = pushes_then_flush  # type: ignore[method-assign]
    try:
        fanout.push((ws,), "v10 progress", batched=True)  # the batch timer runs from now
        got = [await asyncio.wait_for(client.recv(), 2) for _ in range(4)]
        assert pushed.is_set()
        assert got == ["v10 progress", "v11 progress", "v12 ack", "v13 progress"]
    finally:
        fanout.close()
        await client.close()
        server.close()
        await server.wait_closed()


async def test_a_message_connection_hands_whole_messages_over_as_they_are_parsed() -> None:
    """MessageConnection's reading of websockets' internals (process_event, a Frame's
    opcode, fin and data): whole text and binary messages go to on_message at once, a
    fragmented one and any after it through recv(), in order."""
    got: list[tuple[str, str | bytes]] = []
    done = asyncio.Event()

    def arrived(way: str, data: str | bytes) -> None:
        got.append((way, data))
        if data == "last":
            done.set()

    async def handler(ws: ServerConnection) -> None:
        assert isinstance(ws, transport.MessageConnection)
        ws.on_message = lambda data: arrived("now", data)
        async for data in ws:
            ws.queued -= 1
            arrived("recv", data)

    server = await serve(
        handler, "127.0.0.1", 0, compression=None, create_connection=transport.MessageConnection
    )
    port = server.sockets[0].getsockname()[1]
    client = await connect(f"ws://127.0.0.1:{port}", compression=None)
    try:
        await client.send("text")
        await client.send(b"bytes")
        await asyncio.sleep(0.05)
        await client.send(["frag", "mented"])
        await client.send("last")
        await asyncio.wait_for(done.wait(), 2)
        # "last" goes either way (recv() if the fragmented one was still queued), in order
        assert got[:3] == [("now", "text"), ("now", b"bytes"), ("recv", "fragmented")]
        assert [data for _, data in got[3:]] == ["last"]
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


def _masked(payload: bytes, opcode: int = 0x1, fin: bool = True, rsv: int = 0) -> bytes:
    """A client frame (RFC 6455 section 5.2), masked as a client must."""
    mask = bytes((0x37, 0xFA, 0x21, 0x3D))
    n = len(payload)
    head = bytes(((0x80 if fin else 0) | rsv | opcode,))
    if n < 126:
        head += bytes((0x80 | n,))
    elif n < 65536:
        head += bytes((0x80 | 126,)) + n.to_bytes(2, "big")
    else:
        head += bytes((0x80 | 127,)) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


REQUEST = (
    b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def _raw_server(max_size: int = 1 << 20):
    """A MessageConnection server that records what reaches its handler, both ways."""
    got: list[tuple[str, str | bytes]] = []
    conns: list[transport.MessageConnection] = []

    async def handler(ws: ServerConnection) -> None:
        assert isinstance(ws, transport.MessageConnection)
        conns.append(ws)
        ws.on_message = lambda data: got.append(("now", data))
        async for data in ws:
            ws.queued -= 1
            got.append(("recv", data))

    server = await serve(
        handler,
        "127.0.0.1",
        0,
        compression=None,
        max_size=max_size,
        create_connection=transport.MessageConnection,
    )
    return server, server.sockets[0].getsockname()[1], got, conns


async def test_frames_are_split_on_arrival_however_the_bytes_come() -> None:
    """Frames sent with the request, a byte at a time, many in one write, with a ping and
    a fragmented message between them: every message whole, in order."""
    server, port, got, _ = await _raw_server()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(REQUEST + _masked(b"early"))  # before the response (not allowed, kept)
        response = await reader.readuntil(b"\r\n\r\n")
        assert response.startswith(b"HTTP/1.1 101")
        await until(lambda: len(got) == 1)  # (before the handler was there: recv())
        for byte in _masked("é".encode() * 70):  # 140 bytes: a 16-bit length
            writer.write(bytes((byte,)))
            await writer.drain()
            await asyncio.sleep(0)
        writer.write(
            _masked(b"one")
            + _masked(b"\x00\xff", opcode=0x2)
            + _masked(b"ping", opcode=0x9)
            + _masked(b"x" * 70_000)
            + _masked(b"frag", fin=False)
            + _masked(b"mented", opcode=0)
            + _masked(b"after")
        )
        pong = await reader.readexactly(6)
        assert pong == b"\x8a\x04ping"  # websockets answered the ping
        await until(lambda: len(got) >= 7)
        assert [data for _, data in got] == [
            "early",
            "é" * 70,
            "one",
            b"\x00\xff",
            "x" * 70_000,
            "fragmented",
            "after",
        ]
        # handed over at once, but the fragmented one (websockets' way, and "after" behind
        # it if it was still queued)
        assert [way for way, _ in got[1:6]] == ["now"] * 4 + ["recv"]
        writer.write(_masked(b"\x03\xe8", opcode=0x8))  # close, 1000
        closing = await reader.read(4)
        assert closing[:4] == b"\x88\x02\x03\xe8"
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


async def _closed_with(frame: bytes, max_size: int = 1 << 20) -> tuple[int, list]:
    server, port, got, _ = await _raw_server(max_size)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(REQUEST)
        await reader.readuntil(b"\r\n\r\n")
        writer.write(_masked(b"fine") + frame + _masked(b"never"))
        head = await asyncio.wait_for(reader.readexactly(4), 3)
        assert head[0] == 0x88  # a close frame
        writer.close()
        await asyncio.sleep(0.05)
        return int.from_bytes(head[2:4], "big"), got
    finally:
        server.close()
        await server.wait_closed()


async def test_bad_frames_close_the_connection_as_websockets_would() -> None:
    unmasked = b"\x81\x03abc"
    assert await _closed_with(unmasked) == (1002, [("now", "fine")])
    assert await _closed_with(_masked(b"\xff\xfe")) == (1007, [("now", "fine")])
    assert await _closed_with(_masked(b"abc", rsv=0x40)) == (1002, [("now", "fine")])
    # too long: refused from its header, before its payload arrives
    too_long = _masked(b"y" * 2000)[:200]
    assert await _closed_with(too_long, max_size=1000) == (1009, [("now", "fine")])


async def _closed_as_too_slow(ws: ServerConnection, client: Any, why: str) -> None:
    """``ws`` was closed with 1008 naming ``why``, and the connection is gone within its
    close timeout although the client never read."""
    assert isinstance(ws, MessageConnection) and ws.slow == why
    assert ws.protocol.close_sent is not None
    assert ws.protocol.close_sent.code == 1008
    assert ws.protocol.close_sent.reason == "too slow: " + transport.SLOW[why]
    await asyncio.wait_for(ws.wait_closed(), 5)
    assert not transport.accepts(ws)
    assert not transport.write(ws, [transport.frame(b"late")])  # nothing more is written
    client.transport.abort()


async def test_a_peer_past_the_backlog_is_closed_as_too_slow() -> None:
    server, ws, client = await _pair(create_connection=MessageConnection, close_timeout=0.5)
    try:
        client.transport.pause_reading()  # reads nothing from here on
        chunk = transport.frame(b"x" * 100_000)
        for _ in range(1000):  # the kernel's buffers take some first
            if transport.write(ws, [chunk]):
                break
        else:
            raise AssertionError("never dropped")
        assert ws.unread > transport.MAX_BACKLOG
        await _closed_as_too_slow(ws, client, "backlog")
    finally:
        server.close()
        await server.wait_closed()


async def test_a_peer_that_stops_reading_is_closed_when_writing_stays_paused(
    monkeypatch,
) -> None:
    monkeypatch.setattr(transport, "STALL_S", 0.3)
    server, ws, client = await _pair(create_connection=MessageConnection, close_timeout=0.5)
    try:
        client.transport.pause_reading()
        chunk = transport.frame(b"x" * 20_000)
        while not ws.paused:  # past websockets' write limit, under MAX_BACKLOG
            assert not transport.write(ws, [chunk])
            await asyncio.sleep(0)
        assert ws.transport.get_write_buffer_size() < transport.MAX_BACKLOG
        await until(lambda: ws.slow is not None, 5)
        await _closed_as_too_slow(ws, client, "stalled")
    finally:
        server.close()
        await server.wait_closed()


async def _read_all(client: Any) -> None:
    async for _ in client:
        pass


async def test_a_slow_reader_that_catches_up_is_kept(monkeypatch) -> None:
    # 1 s: the test's own loop, stalled by a loaded machine between the pause and the
    # resume, took a reader back within 0.1 s for one stalled past 0.3 s
    monkeypatch.setattr(transport, "STALL_S", 1.0)
    server, ws, client = await _pair(create_connection=MessageConnection, close_timeout=0.5)
    try:
        client.transport.pause_reading()
        chunk = transport.frame(b"x" * 20_000)
        while not ws.paused:
            transport.write(ws, [chunk])
            await asyncio.sleep(0)
        await asyncio.sleep(0.1)
        client.transport.resume_reading()  # reads again before the stall bound
        reader = asyncio.create_task(_read_all(client))
        await until(lambda: not ws.paused, 5)
        await asyncio.sleep(1.2)  # past the stall bound since the pause
        assert ws.slow is None and transport.accepts(ws)
        reader.cancel()
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


async def test_a_peer_that_never_answers_a_ping_is_closed_as_too_slow() -> None:
    server, ws, client = await _pair(
        create_connection=MessageConnection, ping_interval=0.1, ping_timeout=0.2, close_timeout=0.5
    )
    try:
        client.transport.pause_reading()  # so it never sees the ping to answer it
        await until(lambda: ws.slow is not None, 5)
        await _closed_as_too_slow(ws, client, "keepalive")
    finally:
        server.close()
        await server.wait_closed()


async def test_a_peer_that_answers_pings_is_kept() -> None:
    server, ws, client = await _pair(
        create_connection=MessageConnection, ping_interval=0.05, ping_timeout=0.2
    )
    try:
        await asyncio.sleep(0.6)  # a dozen pings, each answered by the client on its own
        assert ws.slow is None and transport.accepts(ws)
    finally:
        await client.close()
        server.close()
        await server.wait_closed()

"""Sending without waiting: each message framed once, one write per connection per turn.

Every message the server sends goes through ``push(connections, text)``. The WebSocket
frame is built once per message, not once per recipient: frames from a server are not
masked and compression is off, so the same bytes go to every connection. The writes are
deferred to the end of the event-loop turn, so everything a group commit produces for
one connection (an ack and several room updates) leaves in a single ``write``: one
system call instead of one per message, which is most of a message's cost. Like
``websockets.broadcast`` there is no backpressure: keepalive pings drop dead peers, and a
peer that leaves more than ``MAX_BACKLOG`` bytes unread is dropped at once. The updates a
move causes for the others in the room (spectators' boards, racers' progress) may be
``batched`` (``KR_SPECTATOR_BATCH_MS``, 50 ms by default): they wait up to ``batch_interval``
and leave together, so a connection in a very busy room costs a few writes a second, not
one per move; anything unbatched for the same connection (an ack) takes them along at
once, ahead of itself. Connections
that are not open are skipped. Control frames (ping, pong, close) still go
through the connection's protocol object; pending data frames of a connection that is
closing are dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import structlog
from websockets.asyncio.connection import Connection
from websockets.protocol import OPEN

log = structlog.get_logger("klondike_race.fanout")

MAX_BACKLOG = 1 << 20  # bytes a connection may leave unread before it is dropped

_pending: dict[Connection, list[bytes]] = {}
_scheduled: asyncio.AbstractEventLoop | None = None  # the loop a flush is scheduled on
_batched: dict[Connection, list[bytes]] = {}
_batch_timer: asyncio.TimerHandle | None = None
_batch_loop: asyncio.AbstractEventLoop | None = None  # the loop the timer is on
batch_interval = 0.0  # seconds a batched (spectator) update may wait; 0: not batched


def frame(data: bytes) -> bytes:
    """One unmasked, final text frame (RFC 6455 section 5.2)."""
    n = len(data)
    if n < 126:
        return bytes((0x81, n)) + data
    if n < 65536:
        return b"\x81\x7e" + n.to_bytes(2, "big") + data
    return b"\x81\x7f" + n.to_bytes(8, "big") + data


def push(connections: Iterable[Connection], text: str | bytes, batched: bool = False) -> None:
    """Send ``text`` to each connection at the end of this loop turn, or with ``batched``
    within ``batch_interval`` together with the other batched updates for it (spectators:
    every update still arrives, in order, in fewer writes)."""
    global _scheduled, _batch_timer, _batch_loop
    framed = None
    batched = batched and batch_interval > 0
    pending, held = _pending, _batched
    for ws in connections:
        protocol = ws.protocol
        if protocol.state is not OPEN or ws.send_in_progress is not None:
            continue
        if framed is None:
            framed = frame(text.encode() if isinstance(text, str) else text)
        if batched:
            later = held.get(ws)
            if later is None:
                held[ws] = [framed]
            else:
                later.append(framed)
            continue
        chunks = pending.get(ws)
        if chunks is None:
            # anything the protocol has queued (a pong, say) goes first
            chunks = pending[ws] = protocol.data_to_send() if protocol.writes else []
        if held:
            earlier = held.pop(ws, None)  # batched updates sent before this message
            if earlier is not None:
                chunks += earlier
        chunks.append(framed)
    if pending:
        loop = asyncio.get_running_loop()
        if _scheduled is not loop:
            _scheduled = loop
            loop.call_soon(_flush)
    if held:
        loop = asyncio.get_running_loop()
        # a timer left on another loop (a server stopped and started again, in the
        # tests) would never fire here
        if _batch_timer is None or _batch_loop is not loop:
            _batch_loop = loop
            _batch_timer = loop.call_later(batch_interval, _flush_batched)


def _flush() -> None:
    global _scheduled
    _scheduled = None
    pending = list(_pending.items())
    _pending.clear()
    _write(pending)


def _flush_batched() -> None:
    global _batch_timer
    _batch_timer = None
    pending = list(_batched.items())
    _batched.clear()
    _write(pending)


def _write(pending: list[tuple[Connection, list[bytes]]]) -> None:
    for ws, chunks in pending:
        try:
            transport = ws.transport
            protocol = ws.protocol
            if protocol.state is not OPEN or transport.is_closing():
                continue
            if protocol.writes:
                chunks += protocol.data_to_send()
            transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))
            if transport.get_write_buffer_size() > MAX_BACKLOG:
                log.warning("slow consumer: dropping the connection", backlog=MAX_BACKLOG)
                transport.abort()
        except Exception as err:  # the connection is going away; its handler cleans up
            log.warning("write failed", error=repr(err))

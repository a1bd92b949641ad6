"""The one place that reads websockets' internals: writing ready-made frames straight to
a server connection's transport, and reading whole text messages as they are parsed.

websockets sends each message through its own protocol object, one ``write`` per frame.
Fan-out (fanout.py) instead frames a message once for every recipient and writes all of a
connection's pending frames at once. That needs, of a ``ServerConnection``: ``protocol``
(``state``, ``writes`` and ``data_to_send()``, so that control frames it has queued, a
pong say, go out first and in order), ``send_in_progress`` (a fragmented message being
sent: nothing may be written in between) and ``transport``.

``MessageConnection`` (the server's ``create_connection``) hands each whole, unfragmented
message to its ``on_message`` as the protocol parses it, instead of queueing it for
``recv()``: no queue and no wake-up of the handler's task per message, which is most of
what receiving a small message costs (docs/benchmarks.md). It overrides
``process_event`` and reads ``Frame``'s ``opcode``, ``fin`` and ``data``. These are internals: the
supported versions are pinned in pyproject.toml, and tests/service/test_transport.py fails
when a websockets release changes any of them.

A peer that stops reading is closed as too slow (``MessageConnection.drop_slow``): when
the bytes it has not read pass ``MAX_BACKLOG``, when writing to it stays paused (over
websockets' ``write_limit``, 32 KiB) for ``STALL_S`` seconds, or when a keepalive ping
goes unanswered for ``ping_timeout`` seconds (websockets' own keepalive, replaced so that
it closes the same way instead of with 1011).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from websockets.asyncio.connection import Connection
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import DATA_OPCODES, CloseCode, Frame, Opcode
from websockets.protocol import OPEN

MAX_BACKLOG = 1 << 20  # bytes a connection may leave unread before it is dropped
STALL_S = 5.0  # seconds writing to a connection may stay paused before it is dropped
# why a peer was closed as too slow: the close's reason (code 1008) after "too slow: "
SLOW = {
    "backlog": "over 1 MiB unread",
    "stalled": f"nothing read for {STALL_S:.0f} s",
    "keepalive": "no answer to a ping",
}


def frame(data: bytes) -> bytes:
    """One unmasked, final text frame (RFC 6455 section 5.2): frames from a server are
    not masked and compression is off, so the same bytes go to every connection."""
    n = len(data)
    if n < 126:
        return bytes((0x81, n)) + data
    if n < 65536:
        return b"\x81\x7e" + n.to_bytes(2, "big") + data
    return b"\x81\x7f" + n.to_bytes(8, "big") + data


def accepts(ws: Connection) -> bool:
    """Open, and not in the middle of sending a fragmented message."""
    return ws.protocol.state is OPEN and ws.send_in_progress is None


def queued(ws: Connection) -> list[bytes]:
    """What the connection's protocol has queued to send (control frames), taken."""
    protocol = ws.protocol
    return protocol.data_to_send() if protocol.writes else []


def write(ws: Connection, chunks: list[bytes]) -> bool:
    """Write ``chunks`` (after anything the protocol queued meanwhile) in one system call,
    unless the connection is closing. True when the peer had left more than
    ``MAX_BACKLOG`` bytes unread: the connection was dropped."""
    transport = ws.transport
    protocol = ws.protocol
    if protocol.state is not OPEN or transport.is_closing():
        return False
    if protocol.writes:
        chunks += protocol.data_to_send()
    transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))
    if transport.get_write_buffer_size() > MAX_BACKLOG:
        if isinstance(ws, MessageConnection):
            ws.drop_slow("backlog")
        else:
            transport.abort()
        return True
    return False


class MessageConnection(ServerConnection):
    """A server connection that gives each whole message to ``on_message`` (set by its
    handler) at once: a text frame's as ``str``, a binary frame's as ``bytes``. A fragmented
    message and text that is not UTF-8 take websockets' own way (the handler's ``recv()``;
    invalid UTF-8 text closes with 1007 there), and while any waits there (``queued``),
    later messages queue behind it, so the handler sees every message in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_message: Callable[[str | bytes], None] | None = None
        self.queued = 0  # whole messages in websockets' queue, not yet taken by recv()
        self._fragment = False  # a fragmented message is arriving
        self.slow: str | None = None  # why it was closed as too slow (a key of SLOW)
        self.unread = 0  # bytes the server held for it then
        self._stall: asyncio.TimerHandle | None = None  # drops it unless writing resumes

    # ---- peers that do not read -------------------------------------------------------
    def drop_slow(self, why: str) -> None:
        """Close the connection as too slow (``why``: a key of ``SLOW``): 1008, the reason
        naming it. Nothing more is written to it; the close frame goes out after what the
        peer has not read yet, and the TCP connection is cut ``close_timeout`` seconds
        later whether or not the peer read it (websockets' ``close()`` would first wait
        for the peer to read everything)."""
        if self.slow is not None or self.protocol.state is not OPEN:
            return
        self.slow = why
        self.unread = self.transport.get_write_buffer_size()
        self.protocol.fail(CloseCode.POLICY_VIOLATION, "too slow: " + SLOW[why])
        self.send_data()
        self.loop.call_later(self.close_timeout or 0, self.transport.abort)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._stall = self.loop.call_later(STALL_S, self.drop_slow, "stalled")

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        super().connection_lost(exc)

    async def keepalive(self) -> None:
        """A ping every ``ping_interval`` seconds; no pong within ``ping_timeout``: the
        peer is too slow (or gone)."""
        assert self.ping_interval is not None
        try:
            while True:
                await asyncio.sleep(self.ping_interval)
                pong = await self.ping()
                if self.ping_timeout is None:
                    continue
                try:
                    async with asyncio.timeout(self.ping_timeout):
                        await pong
                except TimeoutError:
                    self.drop_slow("keepalive")
                    return
        except ConnectionClosed:
            return

    def process_event(self, event: Any) -> None:
        if isinstance(event, Frame) and event.opcode in DATA_OPCODES:
            if event.fin and not self._fragment and not self.queued and self.on_message:
                if event.opcode is Opcode.BINARY:
                    self.on_message(bytes(event.data))
                    return
                if event.opcode is Opcode.TEXT:
                    try:
                        text = bytes(event.data).decode()
                    except UnicodeDecodeError:
                        pass  # websockets closes the connection with 1007
                    else:
                        self.on_message(text)
                        return
            self._fragment = not event.fin
            if event.fin:
                self.queued += 1
        super().process_event(event)

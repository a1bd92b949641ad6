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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from websockets.asyncio.connection import Connection
from websockets.asyncio.server import ServerConnection
from websockets.frames import DATA_OPCODES, Frame, Opcode
from websockets.protocol import OPEN

try:
    from websockets.speedups import apply_mask  # websockets' C extension, when built
except ImportError:  # pragma: no cover - websockets without its C extension
    from websockets.utils import apply_mask

MAX_BACKLOG = 1 << 20  # bytes a connection may leave unread before it is dropped

# what a MessageConnection's incoming bytes are: the opening handshake's request (to
# websockets), bytes after it while the handshake is answered (held), frames (split here),
# or, after a refusal, a failure or a close, everything to websockets as it comes
REQUEST, HANDSHAKE, FRAMES, DIRECT = "request", "handshake", "frames", "direct"


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
        transport.abort()
        return True
    return False


class MessageConnection(ServerConnection):
    """A server connection that gives each whole message to ``on_message`` (set by its
    handler) at once: a text frame's as ``str``, a binary frame's as ``bytes``. A fragmented
    message and text that is not UTF-8 take websockets' own way (the handler's ``recv()``;
    invalid UTF-8 text closes with 1007 there), and while any waits there (``queued``),
    later messages queue behind it, so the handler sees every message in order.

    Once the connection is open, ``data_received`` splits the bytes into frames itself
    (RFC 6455 section 5.2): a whole, final, masked text or binary frame goes straight to
    ``on_message`` (unmasked by websockets' C ``apply_mask``); every other frame (control
    frames, fragments, anything with RSV bits or an unknown opcode) is handed to
    websockets whole, frame by frame in order, so its parser is always at a frame boundary
    when one is skipped. A frame longer than ``max_message_size``, or one that is not
    masked, and everything after it, go to websockets as they come (it fails the
    connection). Until the opening handshake's request has ended, bytes go to websockets;
    what follows the request's blank line is held until the handshake is done."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_message: Callable[[str | bytes], None] | None = None
        self.queued = 0  # whole messages in websockets' queue, not yet taken by recv()
        self._fragment = False  # a fragmented message is arriving
        self._reading = REQUEST  # what this connection's bytes are (below)
        self._held = bytearray()  # bytes after the request, or of an incomplete frame
        self._tail = b""  # the request's last bytes, to find its end across reads

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        try:
            await super().handshake(*args, **kwargs)
        finally:
            held, self._held = bytes(self._held), bytearray()
            if self.protocol.state is OPEN and self._reading is not DIRECT:
                self._reading = FRAMES
                if held:
                    self._frames(held)
            else:  # refused, or an HTTP route: websockets' way
                self._reading = DIRECT
                if held:
                    super().data_received(held)

    def data_received(self, data: bytes) -> None:
        reading = self._reading
        if reading is FRAMES:
            held = self._held
            if held:
                held += data
                data = bytes(held)
                held.clear()
            self._frames(data)
        elif reading is REQUEST:
            seen = self._tail + data
            end = seen.find(b"\r\n\r\n")
            if end < 0:
                self._tail = seen[-3:]
                super().data_received(data)
                return
            cut = end + 4 - len(self._tail)  # the request's end, in ``data``
            self._tail = b""
            self._reading = HANDSHAKE
            super().data_received(data[:cut])
            self._held += data[cut:]
        elif reading is HANDSHAKE:  # (a client must wait for the response: RFC 6455 4.1)
            self._held += data
        else:
            super().data_received(data)

    def _frames(self, data: bytes) -> None:
        """Take the frames of ``data`` in order; keep an incomplete last one."""
        n = len(data)
        at = 0
        while at < n:
            if n - at < 2:
                break
            head, size = data[at], data[at + 1]
            length = size & 0x7F
            start = at + 6
            if length == 126:
                if n - at < 4:
                    break
                length = int.from_bytes(data[at + 2 : at + 4], "big")
                start = at + 8
            elif length == 127:
                if n - at < 10:
                    break
                length = int.from_bytes(data[at + 2 : at + 10], "big")
                start = at + 14
            limit = self.protocol.max_message_size
            if not size & 0x80 or (limit is not None and length > limit):
                self._reading = DIRECT  # websockets fails the connection: give it all
                super().data_received(data[at:])
                return
            end = start + length
            if end > n:
                break
            if (
                (head == 0x81 or head == 0x82)  # final text or binary, no RSV bits
                and self.on_message is not None
                and not self._fragment
                and not self.queued
                and self.protocol.state is OPEN
            ):
                payload = apply_mask(data[start:end], data[start - 4 : start])
                if head == 0x82:
                    at = end
                    self.on_message(payload)
                    continue
                try:
                    text = payload.decode()
                except UnicodeDecodeError:
                    pass  # websockets closes the connection with 1007
                else:
                    at = end
                    self.on_message(text)
                    continue
            super().data_received(data[at:end])
            at = end
            if self._reading is DIRECT or self.protocol.state is not OPEN:
                self._reading = DIRECT  # closing (or failed): websockets' way from here
                if at < n:
                    super().data_received(data[at:])
                return
        if at < n:
            self._held += data[at:] if at else data

    def eof_received(self) -> None:
        if self._held:  # an incomplete frame: websockets reports it
            held, self._held = bytes(self._held), bytearray()
            super().data_received(held)
        return super().eof_received()

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

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

MAX_BACKLOG = 1 << 20  # bytes a connection may leave unread before it is dropped


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
    later messages queue behind it, so the handler sees every message in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_message: Callable[[str | bytes], None] | None = None
        self.queued = 0  # whole messages in websockets' queue, not yet taken by recv()
        self._fragment = False  # a fragmented message is arriving

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

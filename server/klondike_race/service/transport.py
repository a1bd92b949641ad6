"""The one place that reads websockets' internals: writing ready-made frames straight to
a server connection's transport.

websockets sends each message through its own protocol object, one ``write`` per frame.
Fan-out (fanout.py) instead frames a message once for every recipient and writes all of a
connection's pending frames at once. That needs, of a ``ServerConnection``: ``protocol``
(``state``, ``writes`` and ``data_to_send()``, so that control frames it has queued, a
pong say, go out first and in order), ``send_in_progress`` (a fragmented message being
sent: nothing may be written in between) and ``transport``. These are internals: the
supported versions are pinned in pyproject.toml, and tests/service/test_transport.py fails
when a websockets release changes any of them.
"""

from __future__ import annotations

from websockets.asyncio.connection import Connection
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

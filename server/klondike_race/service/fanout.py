"""Sending without waiting: each message framed once, one write per connection per turn.

Every message the server sends goes through its node's ``Fanout.push(connections, text)``.
The WebSocket frame is built once per message, not once per recipient. The writes are
deferred to the end of the event-loop turn, so everything a group commit produces for
one connection (an ack and several room updates) leaves in a single ``write``: one
system call instead of one per message, which is most of a message's cost. Like
``websockets.broadcast`` there is no backpressure: keepalive pings drop dead peers, and a
peer that leaves more than ``transport.MAX_BACKLOG`` bytes unread is dropped at once.

The updates a move causes for the others in the room (spectators' boards, racers'
progress) may be ``batched`` (``KR_SPECTATOR_BATCH_MS``, 50 ms by default): they wait up
to ``batch_interval`` and leave together, so a connection in a very busy room costs a few
writes a second, not one per move; anything unbatched for the same connection (an ack)
takes them along at once, ahead of itself, and a batched write takes along, ahead of its
own, the connection's unbatched frames still waiting for the end of their turn (its timer
may run in that turn, after the code that pushed them): a connection's frames leave in
the order they were pushed. Connections that are not open are skipped;
pending data frames of a connection that is closing are dropped.

The batched writes are spread over the interval: each connection belongs to one of
``PHASES`` phases, and a timer every ``batch_interval / PHASES`` writes one phase's
connections. Written all at once, the thousands of watchers of a busy node were one
long loop turn every interval (tens of ms), which every acknowledgement due meanwhile
waited for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import structlog
from websockets.asyncio.connection import Connection

from . import transport

log = structlog.get_logger("klondike_race.fanout")


PHASES = 8  # the batched connections' groups, written one after another (a power of 2)
_PHASE_SHIFT = 32 - (PHASES.bit_length() - 1)


def phase_of(ws: Connection) -> int:
    """A connection's phase: its address, Fibonacci-hashed (addresses of objects made
    one after another differ by a fixed stride, which a plain modulo would not spread)."""
    return ((id(ws) >> 4) * 2654435769 & 0xFFFFFFFF) >> _PHASE_SHIFT


class Fanout:
    """One node's outgoing frames: pending until the end of the turn, or batched."""

    def __init__(self, batch_interval: float = 0.0) -> None:
        self.batch_interval = batch_interval  # seconds; 0: nothing is batched
        self._pending: dict[Connection, list[bytes]] = {}
        # batched frames by phase, then connection; a connection's phase never changes
        self._batched: list[dict[Connection, list[bytes]]] = [{} for _ in range(PHASES)]
        self._held = 0  # phases holding anything
        self._turn = 0  # the phase the timer writes next
        self._flush_scheduled = False
        self._batch_timer: asyncio.TimerHandle | None = None

    def push(
        self, connections: Iterable[Connection], text: str | bytes, batched: bool = False
    ) -> None:
        """Send ``text`` to each connection at the end of this loop turn, or with
        ``batched`` within ``batch_interval`` together with the other batched updates
        for it (every update still arrives, in order, in fewer writes)."""
        framed = None
        batched = batched and self.batch_interval > 0
        pending, phases = self._pending, self._batched
        for ws in connections:
            if not transport.accepts(ws):
                continue
            if framed is None:
                framed = transport.frame(text.encode() if isinstance(text, str) else text)
            held = phases[phase_of(ws)]
            if batched:
                later = held.get(ws)
                if later is None:
                    held[ws] = [framed]
                    self._held = 1
                else:
                    later.append(framed)
                continue
            chunks = pending.get(ws)
            if chunks is None:
                # anything the protocol has queued (a pong, say) goes first
                chunks = pending[ws] = transport.queued(ws)
            if held:
                earlier = held.pop(ws, None)  # batched updates sent before this message
                if earlier is not None:
                    chunks += earlier
            chunks.append(framed)
        if pending and not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        if self._held and self._batch_timer is None:
            self._batch_timer = asyncio.get_running_loop().call_later(
                self.batch_interval / PHASES, self._flush_batched
            )

    def flush(self, ws: Connection) -> None:
        """Write everything held for ``ws`` now (before the server closes it)."""
        chunks = self._pending.pop(ws, []) + self._batched[phase_of(ws)].pop(ws, [])
        if chunks:
            _write([(ws, chunks)])

    def close(self) -> None:
        """Drop what is still held (the node is stopping; its connections are closed)."""
        if self._batch_timer is not None:
            self._batch_timer.cancel()
            self._batch_timer = None
        self._pending.clear()
        for held in self._batched:
            held.clear()

    def _flush(self) -> None:
        self._flush_scheduled = False
        pending = list(self._pending.items())
        self._pending.clear()
        _write(pending)

    def _flush_batched(self) -> None:
        """Write one phase's batched frames; again after the next slice of the interval
        while any phase holds frames. Each phase's turn comes once an interval, so a
        frame waits at most about ``batch_interval``."""
        self._batch_timer = None
        held = self._batched[self._turn]
        self._turn = (self._turn + 1) % PHASES
        # a connection's unbatched frames still waiting for the end of their turn (this
        # one: the timer ran after the code that pushed them) were pushed before its
        # batched ones (an unbatched push takes those along): they go first
        ahead = self._pending
        pending = [
            (ws, ahead.pop(ws) + later if ws in ahead else later) for ws, later in held.items()
        ]
        held.clear()
        _write(pending)
        self._held = 1 if any(self._batched) else 0
        if self._held:
            self._batch_timer = asyncio.get_running_loop().call_later(
                self.batch_interval / PHASES, self._flush_batched
            )


def _write(pending: list[tuple[Connection, list[bytes]]]) -> None:
    for ws, chunks in pending:
        try:
            transport.write(ws, chunks)  # a peer too slow is closed (its handler logs it)
        except Exception as err:  # the connection is going away; its handler cleans up
            log.warning("write failed", error=repr(err))

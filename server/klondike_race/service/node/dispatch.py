"""The connections: every message is rate-limited, decoded at the one decode point and
answered, one at a time and in order per connection; a refused request is answered with
an ``error`` and changes nothing; an unexpected failure is logged and closes the
connection with 1011.

Messages arrive as they are parsed (transport.MessageConnection), not through a handler
task that reads them: a move is checked and queued for the group commit in the same
loop turn that read it, and acknowledged from the commit's callback, so a move costs no
task and no wake-up of one. Any other message that waits for something (the store, the
solver) runs in a task; the next message waits for it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, assert_never

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import OPEN

from .. import wire
from ..clock import Clock
from ..config import Config
from ..domain.errors import ServiceError
from ..fanout import Fanout
from ..metrics import Metrics
from ..store.base import UNAVAILABLE
from ..transport import MessageConnection
from .arenas import Arenas
from .assist import Assist
from .challenges import Challenges
from .conn import Conn
from .lobby import Lobby
from .players import Players
from .race import Queued, Race
from .registry import Attendance
from .replays import Replays

# messages a connection may leave waiting behind the one being answered before it is not
# read until they are answered (the rate limit closes a connection that keeps sending)
INBOX_HIGH = 16


def spend(conn: Conn, rate: float, burst: float) -> bool:
    """Take one message's credit (``rate`` a second, up to ``burst``) from ``conn``;
    False when the connection is over its rate."""
    now = time.monotonic()
    conn.credit = min(burst, conn.credit + (now - conn.stamp) * rate) - 1
    conn.stamp = now
    return conn.credit >= 0


class Connections:
    def __init__(
        self,
        config: Config,
        metrics: Metrics,
        fanout: Fanout,
        attendance: Attendance,
        lobby: Lobby,
        race: Race,
        assist: Assist,
        players: Players,
        challenges: Challenges,
        replays: Replays,
        arenas: Arenas,
        conns: set[Conn],
        clock: Clock,
    ) -> None:
        self.clock = clock
        self.config = config
        self.metrics = metrics
        self.fanout = fanout
        self.attendance = attendance
        self.lobby = lobby
        self.race = race
        self.assist = assist
        self.players = players
        self.challenges = challenges
        self.replays = replays
        self.arenas = arenas
        self.conns = conns  # every open connection here
        self._tasks: set[asyncio.Task[Any]] = set()  # answers under way (kept referenced)

    @property
    def open(self) -> int:
        return len(self.conns)

    async def handler(self, ws: ServerConnection) -> None:
        assert isinstance(ws, MessageConnection)  # the server's create_connection
        conn = Conn(ws, self.config.burst, self.fanout, self.address(ws))
        self.conns.add(conn)
        self.metrics.connections_total.inc()
        ws.on_message = lambda text: self.arrive(conn, text)
        try:
            # what websockets queued itself (a fragmented message, a binary frame); every
            # other message arrives through on_message as soon as it is parsed
            async for raw in ws:
                ws.queued -= 1
                self.arrive(conn, raw)
        except ConnectionClosed:
            pass
        finally:
            ws.on_message = None
            if ws.slow is not None:
                self.metrics.too_slow.labels(ws.slow).inc()
                conn.log.warning("closed as too slow", reason=ws.slow, unread=ws.unread)
            if conn.busy or conn.inbox:  # the messages received are answered first
                conn.idle = asyncio.get_running_loop().create_future()
                await conn.idle
            self.conns.discard(conn)
            self.challenges.leaderboards.unwatch(conn)
            try:
                await self.arenas.closed(conn)  # paired only while connected
                await self.lobby.cancel_quick(conn)  # first: a race may be entering it
                await self.attendance.detach(conn)
            except Exception:
                conn.log.exception("cleanup failed")

    def address(self, ws: ServerConnection) -> str:
        """The client's IP address: the peer's, or behind a trusted load balancer
        (``KR_TRUST_FORWARDED``) the last one it added to X-Forwarded-For: the last entry
        of the last such header (a balancer adds its own header line after any the client
        sent; HAProxy's ``option forwardfor`` does)."""
        if self.config.trust_forwarded and ws.request is not None:
            forwarded = ws.request.headers.get_all("X-Forwarded-For")
            if forwarded and forwarded[-1].strip():
                return forwarded[-1].split(",")[-1].strip()[:64]
        peer = ws.remote_address
        return str(peer[0]) if peer else ""

    # ---- one message at a time, in order ---------------------------------------------
    def arrive(self, conn: Conn, raw: str | bytes) -> None:
        """A message received: answered now if none is being answered, else after those
        before it. A connection that leaves ``INBOX_HIGH`` waiting is not read meanwhile."""
        if conn.shut:
            return
        if conn.busy:
            conn.inbox.append((raw, time.perf_counter()))  # (its ack's time runs from now)
            if len(conn.inbox) == INBOX_HIGH:
                conn.ws.transport.pause_reading()
            return
        self._take(conn, raw, time.perf_counter())

    def _take(self, conn: Conn, raw: str | bytes, arrived: float) -> None:
        """Answer ``raw``, then the messages waiting after it, while each is answered at
        once (a refused move, a ping); one that waits (a move's group commit, anything
        that reads the store) takes the next one when it is done (``_next``)."""
        while True:
            if not spend(conn, self.config.rate, self.config.burst):
                # every message before this one was answered: the answers leave first;
                # this one and any after it are not read
                conn.log.warning("rate limit: closing")
                self._shut(conn, 1008, "message rate limit exceeded")
                return
            conn.busy = True
            if not self._receive(conn, raw, arrived):
                return
            conn.busy = False
            if not conn.inbox:
                self._idle(conn)
                return
            raw, arrived = conn.inbox.popleft()

    def _next(self, conn: Conn) -> None:
        conn.busy = False
        if conn.inbox and not conn.shut:
            self._take(conn, *conn.inbox.popleft())
        else:
            self._idle(conn)

    def _idle(self, conn: Conn) -> None:
        if conn.shut:
            conn.inbox.clear()
        elif not conn.ws.transport.is_reading() and conn.ws.protocol.state is OPEN:
            conn.ws.transport.resume_reading()
        if conn.idle is not None and not conn.idle.done():
            conn.idle.set_result(None)

    def _receive(self, conn: Conn, raw: str | bytes, arrived: float) -> bool:
        """One message: decoded, then answered, or refused with the reason. True when
        answered already; False when the answer goes on (it calls ``_next`` at its end).
        A move is checked and queued for the group commit at once and acknowledged from
        the commit's callback; anything else that waits runs in a task. ``arrived``
        (``time.perf_counter()``): when the frame came, the start of its ack's latency."""
        t0 = arrived
        message: wire.Message | None = None
        try:
            message = wire.decode(raw)
            if isinstance(message, wire.MoveRequest | wire.Resign):
                move = message.move if isinstance(message, wire.MoveRequest) else None
                queued = self.race.start(conn, message.seq, message.player, t0, move)
                if queued is None:
                    return True
                if not isinstance(queued, Queued):  # the stored game is read first
                    self._spawn(self._answer(conn, None, queued)).add_done_callback(
                        lambda _: self._next(conn)
                    )
                    return False
                queued.stored.add_done_callback(lambda _: self._stored(queued))
                return False
            if isinstance(message, wire.Ping):
                now = self.clock.now_ms()
                conn.send(wire.encode_text({"type": "pong", "id": message.id, "server_time": now}))
                return True
        except ServiceError as err:
            self._refused(conn, err, message)
            return True
        except Exception as err:
            self._failed(conn, err)
            return True
        self._spawn(self._answer(conn, message)).add_done_callback(lambda _: self._next(conn))
        return False

    def _stored(self, queued: Queued) -> None:
        """A queued move's group commit is done: acknowledge it (and what follows)."""
        conn = queued.conn
        try:
            rest = self.race.finish(queued, queued.stored.result())
        except Exception as err:
            self._failed(conn, err)
            rest = None
        if rest is None:
            self._next(conn)
        else:
            self._spawn(self._answer(conn, None, rest)).add_done_callback(
                lambda _: self._next(conn)
            )

    async def _answer(
        self,
        conn: Conn,
        message: wire.Message | None,
        rest: Coroutine[Any, Any, Any] | None = None,
    ) -> None:
        """A message (or the rest of a move's answer) that waits for something."""
        try:
            if rest is not None:
                await rest
            else:
                assert message is not None
                await self.dispatch(conn, message)
        except ServiceError as err:
            self._refused(conn, err, message)
        except Exception as err:
            self._failed(conn, err)

    def _refused(self, conn: Conn, err: ServiceError, message: wire.Message | None) -> None:
        self.metrics.error(err.reason)
        about = err.about or (wire.TYPE_OF.get(type(message)) if message else None)
        conn.send(
            wire.encode_text(
                {
                    "type": "error",
                    "reason": err.reason,
                    "message": str(err),
                    "about": about,
                    **err.fields(),
                }
            )
        )

    def _failed(self, conn: Conn, err: Exception) -> None:
        """Answering failed: the connection closes (1013 while Redis is unreachable:
        nothing was acknowledged meanwhile; 1011 for anything unexpected)."""
        if isinstance(err, ConnectionClosed):
            return
        if isinstance(err, UNAVAILABLE):
            conn.log.warning("redis unavailable: closing", error=repr(err))
            self._shut(conn, 1013, "try again later")
            return
        conn.log.error(
            "connection failed",
            room=conn.hub and conn.hub.code,
            player=conn.player,
            exc_info=err,
        )
        self._shut(conn, 1011, "internal error")

    def _shut(self, conn: Conn, code: int, reason: str) -> None:
        """Nothing more is read; what was answered leaves first, then the close."""
        conn.shut = True
        conn.inbox.clear()
        self.fanout.flush(conn.ws)
        self._spawn(conn.ws.close(code, reason))

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def dispatch(self, conn: Conn, m: wire.Message) -> None:
        match m:
            case wire.MoveRequest() | wire.Resign() | wire.Ping():
                raise AssertionError(f"{type(m).__name__} is answered by _receive, at once")
            case wire.Create():
                await self.lobby.create(conn, m)
            case wire.Join():
                await self.lobby.join(conn, m)
            case wire.Watch():
                await self.challenges.may_watch(conn, m.code)
                await self.lobby.watch(conn, m)
            case wire.Resume():
                await self.lobby.resume(conn, m.token, m.since)
            case wire.Ready():
                await self.lobby.ready(conn, m.ready)
            case wire.Start():
                await self.lobby.start(conn)
            case wire.Leave():
                await self.lobby.leave(conn)
            case wire.Quick():
                await self.lobby.quick(conn, m.name, m.draw)
            case wire.LeaveQueue():
                await self.lobby.leave_queue(conn)
            case wire.Rooms():
                await self.lobby.list_rooms(conn)
            case wire.Hint():
                await self.assist.hint(conn)
            case wire.Finish():
                await self.assist.finish(conn)
            case wire.Rematch():
                await self.assist.rematch(conn)
            case wire.Hello() | wire.Register() | wire.SignIn():
                # a connection that stops being an account gives up the account's seat, as
                # a sign-out does: its tokens end with the account's sign-in, and so must
                # its hold on the seat (a guest's seat is the device's: its token is all)
                was = conn.identity
                if isinstance(m, wire.Hello):
                    await self.players.hello(conn, m)
                elif isinstance(m, wire.Register):
                    await self.players.register(conn, m)
                else:
                    await self.players.sign_in(conn, m)
                now = conn.identity
                if was is not None and not was.guest and (now is None or now.key != was.key):
                    await self.lobby.unseat(conn, was.key)
            case wire.SignOut():  # no seat of the account's is this connection's now
                await self.lobby.unseat(conn, await self.players.sign_out(conn, m))
            case wire.ChangePassword():
                await self.players.change_password(conn, m)
            case wire.ChallengesRequest():
                await self.challenges.send_list(conn, m)
            case wire.AttemptRequest():
                await self.challenges.attempt(conn, m)
            case wire.WatchBoard():
                await self.challenges.leaderboards.watch(conn, m)
            case wire.ArenasRequest():
                await self.arenas.send_list(conn, m)
            case wire.CreateArena():
                await self.arenas.create(conn, m)
            case wire.JoinArena():
                await self.arenas.join(conn, m)
            case wire.PauseArena():
                await self.arenas.pause(conn, m)
            case wire.Sprint():
                await self.race.sprint(conn)
            case wire.WatchArena():
                await self.arenas.watch(conn, m)
            case wire.GhostRequest():
                await self.lobby.race_ghost(conn, m)
            case wire.ReplayRequest():
                await self.replays.send(conn, m)
            case _:
                assert_never(m)

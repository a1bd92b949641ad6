"""The connection loop: one handler per WebSocket connection. Every frame is rate-limited,
decoded at the one decode point and dispatched to the handler of its area; a refused
request is answered with an ``error`` and changes nothing; an unexpected failure is
logged and closes the connection with 1011."""

from __future__ import annotations

import time
from typing import assert_never

from redis.exceptions import RedisError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from .. import wire
from ..clock import now_ms
from ..config import Config
from ..domain.errors import RateLimited, ServiceError
from ..fanout import Fanout
from ..metrics import Metrics
from .assist import Assist
from .challenges import Challenges
from .conn import Conn
from .ghosts import Ghosts
from .lobby import Lobby
from .players import Players
from .race import Race
from .registry import Hubs
from .replays import Replays


class Connections:
    def __init__(
        self, config: Config, metrics: Metrics, fanout: Fanout, hubs: Hubs,
        lobby: Lobby, race: Race, assist: Assist, players: Players, challenges: Challenges,
        ghosts: Ghosts, replays: Replays,
    ) -> None:  # fmt: skip
        self.config = config
        self.metrics = metrics
        self.fanout = fanout
        self.hubs = hubs
        self.lobby = lobby
        self.race = race
        self.assist = assist
        self.players = players
        self.challenges = challenges
        self.ghosts = ghosts
        self.replays = replays
        self.open = 0

    async def handler(self, ws: ServerConnection) -> None:
        conn = Conn(ws, self.config.burst, self.fanout, self.address(ws))
        self.open += 1
        self.metrics.connections_total.inc()
        try:
            async for raw in ws:
                if not conn.spend(self.config.rate, self.config.burst):
                    # every message before this one was answered: the answers leave
                    # first; this one and any after it are not read
                    conn.log.warning("rate limit: closing")
                    self.fanout.flush(ws)
                    await ws.close(1008, "message rate limit exceeded")
                    break
                await self.receive(conn, raw)
        except ConnectionClosed:
            pass
        except RedisError as err:  # Redis unreachable: nothing was acknowledged meanwhile
            conn.log.warning("redis unavailable: closing", error=repr(err))
            self.fanout.flush(ws)
            await ws.close(1013, "try again later")
        except Exception:
            conn.log.exception(
                "connection failed", room=conn.hub and conn.hub.code, player=conn.player
            )
            await ws.close(1011, "internal error")
        finally:
            self.open -= 1
            self.challenges.boards.unwatch(conn)
            try:
                await self.lobby.cancel_quick(conn)  # first: a match may be entering it
                await self.hubs.detach(conn)
            except Exception:
                conn.log.exception("cleanup failed")

    def address(self, ws: ServerConnection) -> str:
        """The client's IP address: the peer's, or behind a trusted load balancer
        (``KR_TRUST_FORWARDED``) the last one it added to X-Forwarded-For."""
        if self.config.trust_forwarded and ws.request is not None:
            forwarded = ws.request.headers.get("X-Forwarded-For", "")
            if forwarded.strip():
                return forwarded.split(",")[-1].strip()[:64]
        peer = ws.remote_address
        return str(peer[0]) if peer else ""

    async def receive(self, conn: Conn, raw: str | bytes) -> None:
        """One frame: decoded, dispatched, or answered with the reason it was refused."""
        t0 = time.perf_counter()
        message: wire.Message | None = None
        try:
            message = wire.decode(raw)
            await self.dispatch(conn, message, t0)
        except ServiceError as err:
            self.metrics.error(err.reason)
            about = err.about or (wire.TYPE_OF.get(type(message)) if message else None)
            extra = {"retry_after": err.retry_after} if isinstance(err, RateLimited) else {}
            conn.send(wire.error(err.reason, str(err), about, **extra))

    async def dispatch(self, conn: Conn, m: wire.Message, t0: float) -> None:
        match m:
            case wire.MoveRequest():
                await self.race.play(conn, m.seq, m.player, t0, m.move)
            case wire.Resign():
                await self.race.play(conn, m.seq, m.player, t0, None)
            case wire.Ping():
                conn.send(wire.encode_text("pong", id=m.id, server_time=now_ms()))
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
            case wire.Rooms():
                await self.lobby.list_rooms(conn)
            case wire.Hint():
                await self.assist.hint(conn)
            case wire.Finish():
                await self.assist.finish(conn)
            case wire.Rematch():
                await self.assist.rematch(conn)
            case wire.Hello():
                await self.players.hello(conn, m)
            case wire.Register():
                await self.players.register(conn, m)
            case wire.SignIn():
                await self.players.sign_in(conn, m)
            case wire.SignOut():
                await self.players.sign_out(conn, m)
            case wire.ChangePassword():
                await self.players.change_password(conn, m)
            case wire.ChallengesRequest():
                await self.challenges.send_list(conn, m)
            case wire.AttemptRequest():
                await self.challenges.attempt(conn, m)
            case wire.WatchBoard():
                await self.challenges.boards.watch(conn, m)
            case wire.GhostRequest():
                await self.ghosts.race(conn, m)
            case wire.ReplayRequest():
                await self.replays.send(conn, m)
            case _:
                assert_never(m)

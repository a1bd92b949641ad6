"""What each connection of a room may see (a part of ``RoomHub``, hub.py): its sight
(domain/visibility.py) and flags, the standings, the boards live or behind the race, and
the snapshot a connection gets on arriving. The hub keeps the state named here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine import board_view, game_over
from .boards import Boards
from .clock import now_ms
from .contracts import HubHost, Recipient
from .delay import Delayed
from .domain import assist, movelog
from .domain import visibility as V
from .domain.progress import initial_progress
from .domain.room import FINISHED, RACING, Room, public_phase
from .standings import Standings
from .wire import encode


class RoomSight:
    host: HubHost
    push: Callable[..., None]
    conns: set[Any]  # Recipients
    version: int | None
    room: Room | None
    public: dict[str, Any]
    progress: dict[str, dict[str, Any]]
    boards: Boards
    spectators: int
    delayed: Delayed
    standings: Standings
    analysis: dict[str, Any] | None

    @property
    def undo(self) -> bool:
        return self.room is not None and self.room.settings.undo

    @property
    def players(self) -> list[str]:
        return [p["id"] for p in self.public.get("players", ())]

    def over(self, progress: dict[str, Any] | None) -> bool:
        """Whether a player's game is over, from their latest progress (None: no move)."""
        return game_over((progress or initial_progress())["status"], self.undo)

    def phase(self) -> str:
        return public_phase(self.public, now_ms())

    def behind(self) -> int:
        """How far behind the race (ms) spectators see it now: the room's
        ``spectator_delay`` while it runs, else 0."""
        delay = self.public.get("spectator_delay") or 0
        return delay * 1000 if delay and self.phase() == RACING else 0

    def sight(self, conn: Recipient, phase: str | None = None) -> V.Sight:
        role = V.role_of(conn.role == "spectator", conn.over)
        return V.sight(role, phase or self.phase(), V.view_of(self.public))

    def flags(self, conn: Recipient) -> dict[str, bool]:
        """A player's ``can_hint`` and ``can_finish`` now (domain/assist.py)."""
        game = conn.game
        if conn.role != "player" or game is None:
            return {"can_hint": False, "can_finish": False}
        practice = bool(self.public.get("practice"))
        reveal_at = self.room.reveal_at if self.room is not None else None
        return assist.flags(practice, self.phase(), game.status, conn.over, reveal_at, now_ms())

    def leaderboard(self, progress: dict[str, dict[str, Any]] | None = None) -> list[Any]:
        """The room's standings from ``progress`` (default: the latest)."""
        finished = self.phase() == FINISHED
        if progress is None:
            return self.standings.rows(self.public, self.progress, finished)
        return Standings().rows(self.public, progress, finished)

    async def ensure_boards(self) -> dict[str, Any]:
        assert self.room is not None
        return await self.boards.ensure(self.room, self.players, self.elapsed())

    async def boards_for(self, conn: Recipient) -> dict[str, Any]:
        """Every board as ``conn`` may see them now: live, outlined, or as they were
        ``spectator_delay`` ago (from then on its updates come that much later)."""
        sight = self.sight(conn)
        if sight is not V.Sight.DELAYED_BOARDS:
            return V.shown(await self.ensure_boards(), sight)
        self.catch_up(conn)
        return await self._boards_behind()

    async def send_boards(self, conn: Recipient) -> None:
        """Send ``conn`` every board it may see now, unless the race is over (the
        results show them) or it has left meanwhile."""
        boards = await self.boards_for(conn)
        if conn in self.conns and self.phase() != FINISHED:
            self.push((conn.ws,), encode("boards", boards=boards))

    async def _boards_behind(self) -> dict[str, Any]:
        assert self.room is not None
        late = self.elapsed() - self.behind()
        return dict((await self.boards.as_of(self.room, self.players, late))[1])

    def catch_up(self, conn: Recipient) -> None:
        """``conn``'s view starts ``spectator_delay`` behind the race now: updates made
        from then on reach it that much later, and once the delay has passed it gets the
        boards again, with any move made before the first such update was on its way."""
        conn.view_from = now_ms() - self.behind()

        async def send() -> None:
            if conn in self.conns and self.sight(conn) is V.Sight.DELAYED_BOARDS:
                self.push((conn.ws,), encode("boards", boards=await self._boards_behind()))

        self.delayed.call(self.behind(), lambda: self.host.spawn(send()))

    def elapsed(self) -> int:
        start_at = self.public.get("start_at")
        return max(0, now_ms() - start_at) if start_at else 0

    async def snapshot(self, conn: Recipient, kind: str = "welcome", **extra: Any) -> bytes:
        """Everything ``conn`` may see of the room now, as a ``welcome`` (or ``resync``):
        the boards are read first (that may wait for Redis), then everything else at once,
        with no wait, so the message is the room as of its version ``v``."""
        for _ in range(3):  # again if the race started or finished meanwhile
            sight = self.sight(conn)
            earlier, boards = await self._boards_seen(sight)
            if self.sight(conn) is sight:
                break
        phase = self.phase()
        room = self.room
        if (  # an attempt that ended before its reveal, watched after it
            phase == FINISHED
            and "reveal" not in self.public
            and room
            and not room.parent
            and now_ms() >= (room.reveal_at or 0)
        ):
            self.public = {**self.public, "reveal": room.reveal()}
        fields: dict[str, Any] = {
            "v": self.version,
            "role": conn.role,
            "room": {**self.public, "phase": phase},
            "progress": self.progress,
            "leaderboard": self.leaderboard(),
            "spectators": self.spectators,
            "server_time": now_ms(),
            **extra,
        }
        fields.update(self.own_fields(conn, phase))
        if boards is not None:
            fields["boards"] = boards
        if earlier is not None:  # the race as it was ``behind()`` ms ago
            self.catch_up(conn)
            fields["progress"], fields["leaderboard"] = earlier, self.leaderboard(earlier)
        if phase == FINISHED and self.analysis is not None:
            fields["analysis"] = self.analysis
        return encode("welcome" if kind == "welcome" else "resync", **fields)

    async def _boards_seen(
        self, sight: V.Sight
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(progress, boards) of a snapshot for ``sight``: as of ``behind()`` ago for a
        delayed view (progress None otherwise), boards None when it sees none."""
        if sight is V.Sight.DELAYED_BOARDS:
            assert self.room is not None
            earlier, boards = await self.boards.as_of(
                self.room, self.players, self.elapsed() - self.behind()
            )
            return earlier, dict(boards)
        if self.phase() in (RACING, FINISHED) and V.sees_boards(sight):
            return None, V.shown(await self.ensure_boards(), sight)
        return None, None

    def own_fields(self, conn: Recipient, phase: str) -> dict[str, Any]:
        """A player's own part of a snapshot: id, sequence number, board, flags."""
        if conn.role != "player" or conn.game is None:
            return {}
        out: dict[str, Any] = {"player": conn.player, "seq": movelog.logged(conn.game)}
        if phase in (RACING, FINISHED):
            out["board"] = board_view(conn.game, self.elapsed())
        out.update(self.flags(conn))
        return out

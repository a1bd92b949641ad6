"""A node's copies of every player's game in one room, for the connections there that see
boards (domain/visibility.py): replayed from the move logs, then advanced by each progress
event (which names the move, not the board)."""

from __future__ import annotations

import asyncio
from typing import Any

from ..engine import BoardView, Game, board_view, progress
from .domain import movelog
from .domain.room import Room
from .store.moves import MoveLog


class Boards:
    def __init__(self, log: MoveLog, code: str) -> None:
        self.log = log
        self.code = code
        # every player's game and its board; None until a connection here may see boards
        self.games: dict[str, Game] | None = None
        self.logged: dict[str, int] = {}  # player -> log entries in games[player]
        self.boards: dict[str, BoardView] | None = None
        # (player, seq, entry) of the moves delivered while the logs are read (``ensure``)
        self._arrived: list[tuple[str, Any, Any]] | None = None
        self._lock = asyncio.Lock()

    def drop(self, boards: dict[str, BoardView] | None = None) -> None:
        """Forget the games (reloaded when next needed); keep ``boards`` if given (a
        finished race's results carry every board)."""
        self.games, self.boards = None, boards

    async def replay_logs(
        self, room: Room, players: list[str], until: int | None = None
    ) -> dict[str, tuple[Game, int]]:
        """Every player's game replayed from their move log (only the moves made by race
        time ``until`` ms, if given), with the number of log entries it holds."""
        out = {}
        for pid, log in zip(players, await self.log.read_each(self.code, players), strict=True):
            if until is None:
                out[pid] = room.game_of(log), len(log)  # out of time if the limit ended it
            else:
                log = movelog.until(log, until)
                out[pid] = movelog.replay(Game(room.game_deal, room.settings), log), len(log)
        return out

    async def ensure(self, room: Room, players: list[str], elapsed: int) -> dict[str, BoardView]:
        """Every player's board, from games replayed from the move logs when not cached."""
        async with self._lock:
            if self.boards is None:
                self._arrived = []
                try:
                    replayed = await self.replay_logs(room, players)
                    arrived = self._arrived
                finally:
                    self._arrived = None
                # a move delivered while the logs were read is in its player's log when
                # that was read after it; one read before it is played on now; later
                # moves advance these games (``advance``)
                self.games = {pid: game for pid, (game, _) in replayed.items()}
                self.logged = {pid: n for pid, (_, n) in replayed.items()}
                for player, seq, entry in arrived:
                    game = self.games.get(player)
                    if game is not None and seq == self.logged.get(player, 0) + 1:
                        movelog.replay(game, [entry])
                        self.logged[player] = seq
                self.boards = {pid: board_view(g, elapsed) for pid, g in self.games.items()}
            return self.boards

    def arrived(self, player: str, seq: Any, entry: Any) -> None:
        """A move delivered while the games are not made (``ensure`` is reading the logs:
        it plays it on them if its player's log was read before it)."""
        if self._arrived is not None and isinstance(seq, int) and isinstance(entry, str):
            self._arrived.append((player, seq, entry))

    async def as_of(
        self, room: Room, players: list[str], elapsed: int
    ) -> tuple[dict[str, dict[str, Any]], dict[str, BoardView]]:
        """Every player's progress and board at race time ``elapsed`` (ms), replayed from
        the move logs: what a delayed spectator may see."""
        elapsed = max(0, elapsed)
        progresses: dict[str, dict[str, Any]] = {}
        boards: dict[str, BoardView] = {}
        for pid, (game, logged) in (await self.replay_logs(room, players, elapsed)).items():
            if logged:  # (as live: only the players who had moved by then)
                progresses[pid] = {**progress(game, elapsed), "last_ms": game.last_ms}
            boards[pid] = board_view(game, elapsed)
        return progresses, boards

    def advance(
        self, player: str, seq: Any, entry: Any, own: BoardView | None
    ) -> tuple[bool, BoardView | None]:
        """Play a progress event's move on our copy of the player's game: (in step, the
        board after it; ``own`` when our commit made it). Out of step (a missed move): the
        games are dropped, to be reloaded."""
        assert self.games is not None and self.boards is not None
        game, logged = self.games.get(player), self.logged.get(player, 0)
        if game is None or not isinstance(seq, int) or not isinstance(entry, str):
            self.drop()
            return False, own
        if seq == logged + 1:
            movelog.replay(game, [entry])
            self.logged[player] = seq
        elif seq > logged:
            self.drop()
            return False, own
        # seq <= logged: read with the log already; the board shows the log's later position
        view = own if own is not None else board_view(game, movelog.at_ms(entry))
        self.boards[player] = view
        return True, view

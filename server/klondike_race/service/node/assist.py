"""The solver's help: hints and finish it for me (domain/assist.py says when), and
rematches."""

from __future__ import annotations

import time
from dataclasses import replace

from ...engine import Game, Move, progress
from ..clock import Clock
from ..domain import assist, movelog, ranking
from ..domain.errors import ServiceError
from ..domain.options import RoomOptions
from ..domain.room import FINISHED, finish, set_rematch
from ..hub import RoomHub
from ..wire import GhostRequest, Join, encode_text
from .conn import Conn
from .lobby import Lobby
from .race import Race, player_hub
from .rooms import RoomOps, SeatToken
from .solving import Solving

TURNS_TRIED = 3  # moves that turn a card searched for a hint, sharing what is left of its budget


class Assist:
    def __init__(
        self, solving: Solving, rooms: RoomOps, lobby: Lobby, race: Race, clock: Clock
    ) -> None:
        self.clock = clock
        self.solving = solving
        self.rooms = rooms
        self.lobby = lobby
        self.race = race
        self.config = lobby.config

    async def _checked(self, what: str, conn: Conn) -> RoomHub:
        """The player's room, once the solver may help with ``what`` (domain/assist.py),
        with their game as stored: a connection's copy follows only its own moves, and
        another device of the player's may have played on (the help is for the seat's
        position, as its flags are)."""
        hub = player_hub(conn)
        await self.race.reload(conn, hub)
        practice = hub.public.options.practice
        reveal_at = hub.room.reveal_at if hub.room is not None else None
        status = hub.seat_status(conn)
        refusal = assist.refusal(
            what, practice, hub.phase(), status, conn.over, reveal_at, self.clock.now_ms()
        )
        if refusal is not None:
            raise refusal
        if practice:  # the game is no longer the player's alone: its statistics skip it
            await self.rooms.store.rooms.mark_assisted(hub.code, conn.player or "")
        return hub

    async def hint(self, conn: Conn) -> None:
        """A move that keeps the position won, the one a person would make first: a safe
        card home when there is one; else a move that turns a face-down card, when the
        solver proves the position after it won (up to ``TURNS_TRIED`` of them, the column
        with most face-down cards first, sharing what the first search left of the hint
        budget); else the next move of the solver's line."""
        hub = await self._checked(assist.HINT, conn)
        assert hub.room is not None and conn.game is not None
        game = conn.game
        moves = [str(m) for m in game.log]
        out = await self.solving.line(hub.room, moves, self.config.solver_hint_s)
        move = assist.safe_home(game) or Move.parse(out["line"][0])
        length = out["moves"]
        turning = assist.turning_moves(game)
        # what the first search left of the budget, shared by the moves tried: a hint
        # answers within its budget
        budget = (self.config.solver_hint_s - out["seconds"]) / TURNS_TRIED
        if move not in turning and assist.safe_home(game) is None and budget > 0.01:
            for turn in turning[:TURNS_TRIED]:
                try:
                    after = await self.solving.line(hub.room, [*moves, str(turn)], budget)
                except ServiceError as err:
                    if err.reason in ("no_winning_line", "unknown"):
                        continue
                    raise
                move, length = turn, after["moves"] + 1
                break
        conn.send(
            encode_text(
                {
                    "type": "hint",
                    "result": "win",
                    "move": str(move),
                    "line": length,
                    **move.to_wire(),
                }
            )
        )

    async def finish(self, conn: Conn) -> None:
        """Finish it for me: play the solver's winning line, each move stored,
        acknowledged and counted like any other. In a race the line is played in a new
        practice continuation of the player's final position (its own room, ``parent``
        naming the race), so the race's logs and ranking never change."""
        hub = await self._checked(assist.FINISH, conn)
        assert hub.room is not None and conn.game is not None and conn.player is not None
        room = hub.room
        if room.options.practice:
            moves = [str(m) for m in conn.game.log]
            out = await self.solving.line(room, moves, self.config.solver_finish_s)
        else:
            log = movelog.moves_only(await self.rooms.store.log.read(room.code, conn.player))
            out = await self.solving.line(
                room, movelog.solver_moves(log), self.config.solver_finish_s
            )
            await self._continue(conn, hub, log)
        assert conn.game is not None
        line = out["line"]
        conn.send(
            encode_text({"type": "finishing", "seq": conn.game.moves + 1, "moves": len(line)})
        )
        for text in line:
            if self.solving.stopping or conn.game is None:
                break
            if not await self.race.play(
                conn, conn.game.moves + 1, None, time.perf_counter(), Move.parse(text)
            ):
                break

    async def _continue(self, conn: Conn, hub: RoomHub, log: list[str]) -> None:
        """Seat ``conn`` in a practice continuation of their race at ``log``'s position."""
        assert hub.room is not None and conn.player is not None
        room = hub.room
        seat = hub.public.seat(conn.player)
        name = seat.name if seat is not None else "player"
        options = RoomOptions(settings=room.settings, rank_by=room.options.rank_by, practice=True)
        # its clock goes on from the race's last move, so the record's times stay in order
        last_ms = movelog.at_ms(log[-1]) if log else 0
        fork, pid, secret = await self.lobby.new_room(
            name,
            options,
            room.deal,
            conn,
            parent=room.code,
            deal_of=room.challenge or room.deal_of,
            elapsed=last_ms,
        )
        copy = movelog.replay(Game(fork.game_deal, fork.settings), log)
        prog = {**progress(copy, last_ms), "last_ms": last_ms}
        key = ranking.rank_key(prog, options.rank_by, last_ms)
        await self.rooms.store.log.seed(fork.code, pid, log, prog, key)
        await self.lobby.enter(conn, fork, pid, SeatToken(fork.code, pid, secret), log)

    async def rematch(self, conn: Conn) -> None:
        """A new room on the same options, once the race is over; everyone in the old
        room is told its code (``room.rematch`` in a ``room`` event); the first rematch
        asked for is the one: later askers join it."""
        hub = player_hub(conn)
        if hub.phase() != FINISHED:
            raise ServiceError("race_not_over", "a rematch is for a finished race")
        old = await self.rooms.load(hub.code)
        seat = old.seat(conn.player or "")
        name = seat.name if seat else "player"
        if old.options.ghost and old.ghost is not None:
            # a ghost race again: the same recorded game, on its deal (a new deal would
            # leave the ghost nothing to play)
            again = GhostRequest(old.ghost["code"], old.ghost["player"], name)
            await self.lobby.race_ghost(conn, again)
            return
        if old.rematch is None:
            options = replace(old.options, quick=False)  # a rematch room waits for its players
            new, pid, secret = await self.lobby.new_room(name, options, None, conn)
            named = await self.rooms.change(
                old.code, lambda r: set_rematch(r, new.code, self.clock.now_ms())
            )
            if named.rematch == new.code:
                await self.lobby.enter(conn, new, pid, SeatToken(new.code, pid, secret))
                return
            # another player's rematch came first: ours is dropped, theirs joined
            await self.rooms.change(new.code, lambda r: finish(r, self.clock.now_ms(), "abandoned"))
            old = named
        assert old.rematch is not None
        await self.lobby.join(conn, Join(old.rematch, name))

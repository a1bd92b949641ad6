"""``GET /api/replays/{CODE}``: a finished room's replay, or one player's game record
(docs/protocol.md, "Replays"). It reads the stored room and move logs only: no live
game, no solver."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from ..clock import now_ms
from ..domain import replay as rp
from ..domain.errors import ServiceError
from ..domain.room import Room
from ..http import BAD_ESCAPE
from ..store import Store
from ..wire import ReplayRequest, encode
from .challenges import Challenges
from .conn import Conn

MAX_QUERY = 64  # characters: "player=p8&format=record" is 23
PARAMS = {"player", "format"}
FORMATS = ("replay", "record")


def _error(status: int, error: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": error, "message": message}


def parse_query(query: str) -> dict[str, str] | str:
    """The parameters (each at most once, all known), or what is wrong with them."""
    if len(query) > MAX_QUERY:
        return f"the query is longer than {MAX_QUERY} characters"
    if BAD_ESCAPE.search(query):
        return "a malformed query: bad percent-encoding"
    try:
        params = parse_qs(
            query,
            keep_blank_values=True,
            strict_parsing=bool(query),
            max_num_fields=len(PARAMS),
            errors="strict",
        )
    except ValueError as err:  # bad encoding, too many fields, a field without "="
        return f"a malformed query: {err}"
    unknown = set(params) - PARAMS
    if unknown:
        return f"unknown parameter {sorted(unknown)[0]!r}: only player and format"
    if any(len(v) != 1 for v in params.values()):
        return "each parameter at most once"
    out = {k: v[0] for k, v in params.items()}
    if out.get("format", "replay") not in FORMATS:
        return "format is replay or record"
    if out.get("format") == "record" and "player" not in out:
        return "format=record needs player=pN"
    return out


class Replays:
    def __init__(self, store: Store, challenges: Challenges) -> None:
        self.store = store
        self.challenges = challenges

    async def room(self, code: str) -> Room | None:
        loaded = await self.store.rooms.load(code)
        return Room.from_json(loaded[0]) if loaded else None

    async def http(self, rest: str, query: str) -> tuple[int, dict[str, Any]]:
        """``rest`` is the path after ``/api/replays/``: the room's code."""
        if not rp.valid_code(rest):
            return _error(400, "bad_code", "a room code is 6 capitals and digits")
        params = parse_query(query)
        if isinstance(params, str):
            return _error(400, "bad_request", params)
        return await self.read(rest, params.get("player"), params.get("format") == "record")

    async def send(self, conn: Conn, m: ReplayRequest) -> None:
        """``replay`` over the connection: as over HTTP, and a challenge attempt also
        before its challenge closes to a player who may watch it (their own attempt at
        the deal has ended), as ``watch`` allows."""
        status, out = await self.read(m.code, m.player, False, conn)
        if status != 200:
            raise ServiceError(out["error"], out["message"])
        conn.send(encode("replay", replay=out))

    async def read(
        self, code: str, player: str | None, record: bool, conn: Conn | None = None
    ) -> tuple[int, dict[str, Any]]:
        now = now_ms()
        room = await self.room(code)
        if room is None:
            return _error(404, "no_replay", f"no replay of {code} (unknown, or expired)")
        parent = await self.room(room.parent) if room.parent else None
        refused = rp.refusal(room, parent, now)
        gate = parent if room.parent else room
        attempt = gate is not None and gate.challenge
        early = refused is not None and refused[1] == "not_yet" and conn is not None
        if early and attempt:
            assert gate is not None and conn is not None
            await self.challenges.may_watch(conn, gate.code)  # attempt_first, or on
            refused = None
        if refused is not None:
            return _error(*refused)
        if player is not None and room.seat(player) is None:
            return _error(404, "no_player", f"{code} has no player {player!r}")
        seats = [player] if player else [s.id for s in room.seats]
        logs = {pid: await self.store.log.read(room.code, pid) for pid in seats}
        if record:
            assert player is not None
            one = rp.player_replay(room, player, logs[player], now)
            got: dict[str, Any] = one["record"]
            return 200, got
        out = rp.replay(room, logs, now)
        if early:  # the frames show face-up cards only; a record or reveal names the deal
            out["room"].pop("reveal", None)
            for one in out["players"]:
                one["record"] = None
        if player:
            out["players"] = [p for p in out["players"] if p["id"] == player]
            out["timeline"] = [pid for pid in out["timeline"] if pid == player]
        return 200, out

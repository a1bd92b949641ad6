"""``GET /api/replays/{CODE}``: a finished room's replay, or one player's game record
(docs/protocol.md, "Replays"). It reads the stored room and move logs only: no live
game, no solver."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from ..clock import Clock
from ..domain import replay as rp
from ..domain.errors import ServiceError
from ..domain.room import Room
from ..http import BAD_ESCAPE
from ..store import Store
from ..wire import ReplayRequest, encode
from .conn import Conn

MAX_QUERY = 64  # characters: "player=p8&format=record" is 23
PARAMS = {"player", "format"}
FORMATS = ("replay", "record")


def _error(status: int, error: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": error, "message": message}


class Refused(Exception):
    """A replay refused: ``status`` over HTTP, ``error`` over the connection."""

    def __init__(self, status: int, error: ServiceError) -> None:
        super().__init__(str(error))
        self.status = status
        self.error = error


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
    def __init__(self, store: Store, clock: Clock) -> None:
        self.clock = clock
        self.store = store

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
        try:
            got = await self.read(rest, params.get("player"), params.get("format") == "record")
        except Refused as refused:
            err = refused.error
            return refused.status, {"error": err.reason, "message": str(err), **err.fields()}
        return 200, got

    async def send(self, conn: Conn, m: ReplayRequest) -> None:
        """``replay`` over the connection: as over HTTP, refused with the same reasons
        (a game on a challenge's deal only once its challenge is final, whoever asks)."""
        try:
            got = await self.read(m.code, m.player, False)
        except Refused as refused:
            raise refused.error from None
        conn.send(encode({"type": "replay", "replay": got}))

    async def read(self, code: str, player: str | None, record: bool) -> dict[str, Any]:
        """The replay of room ``code`` (one ``player``'s, or their ``record``), or
        ``Refused``."""
        now = self.clock.now_ms()
        room = await self.room(code)
        if room is None:
            unknown = ServiceError("no_replay", f"no replay of {code} (unknown, or expired)")
            raise Refused(404, unknown)
        parent = await self.room(room.parent) if room.parent else None
        refused = rp.refusal(room, parent, now)
        if refused is not None:
            raise Refused(*refused)
        if player is not None and room.seat(player) is None:
            raise Refused(404, ServiceError("no_player", f"{code} has no player {player!r}"))
        seats = [player] if player else [s.id for s in room.seats]
        logs = dict(zip(seats, await self.store.log.read_each(room.code, seats), strict=True))
        if record:
            assert player is not None
            one = rp.player_replay(room, player, logs[player], now)
            got: dict[str, Any] = one["record"]
            return got
        out = rp.replay(room, logs, now)
        if player:
            out["players"] = [p for p in out["players"] if p["id"] == player]
            out["timeline"] = [pid for pid in out["timeline"] if pid == player]
        return out

"""A room's standings (the leaderboard), ranked as docs/rules.md says."""

from __future__ import annotations

from typing import Any

from .domain import ranking
from .domain.progress import initial_progress
from .domain.room import RoomView

Row = tuple[dict[str, Any] | None, int, dict[str, Any]]  # (progress, rank key, row)


class Standings:
    """Leaderboard rows, each made again only when its player's progress changed (a move
    changes one player's), for as long as the room's view is the same."""

    def __init__(self) -> None:
        self._of: RoomView | None = None
        self._finished = False
        self._rows: dict[str, Row] = {}

    def rows(
        self, public: RoomView, progress: dict[str, dict[str, Any]], finished: bool
    ) -> list[dict[str, Any]]:
        if self._of is not public or self._finished != finished:
            self._of, self._finished, self._rows = public, finished, {}
        timed_out = finished and public.end_reason == "time_limit"
        rank_by = public.options.rank_by
        scoring = public.options.settings.scoring
        rows = self._rows
        keys = []
        for p in public.players:
            pid = p.id
            known = progress.get(pid)
            cached = rows.get(pid)
            if cached is None or cached[0] is not known:
                prog = known or initial_progress(scoring)
                row = ranking.row(pid, p.name, prog, timed_out)
                key = ranking.rank_key(prog, rank_by, prog.get("last_ms", 0))
                cached = rows[pid] = (known, key, row)
            keys.append((pid, cached[1]))
        return [{**rows[pid][2], "rank": rank} for pid, rank, _ in ranking.ranks(keys)]

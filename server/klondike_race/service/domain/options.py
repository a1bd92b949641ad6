"""A room's options: one value used by the wire (``create``), the room, its public form
and the lobby list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...engine import Settings

MIN_CAPACITY, MAX_CAPACITY = 2, 8
MIN_TIME_LIMIT, MAX_TIME_LIMIT = 10, 4 * 3600  # seconds
MAX_SPECTATOR_DELAY = 300  # seconds
RANK_BY = ("progress", "score")  # the first is the default

# the options a lobby list shows of each room (besides its code, phase and players)
LISTED = ("settings", "capacity", "time_limit", "rank_by", "spectator_view")


@dataclass(frozen=True, slots=True)
class RoomOptions:
    settings: Settings = field(default_factory=Settings)
    capacity: int = 2
    private: bool = False
    time_limit: int | None = None  # seconds
    rank_by: str = RANK_BY[0]
    quick: bool = False  # made by quick match: seats are ready, the race starts at once
    practice: bool = False  # one player, starts at once, hints and finish allowed
    winnable_only: bool = False  # deal a seed the solver proves winnable
    spectator_delay: int = 0  # seconds (0-300): spectators see the race this far behind
    rated: bool = False  # a private race moves ratings (public races always do)
    ghost: bool = False  # a practice race against a recorded game (a second seat)
    # live, delayed or outline: what spectators see while the race runs, fixed when the
    # room is made (domain/visibility.py, room_view; node/rooms.py); left out (a room
    # stored before views existed): by spectator_delay alone
    spectator_view: str = ""

    def __post_init__(self) -> None:
        if not self.spectator_view:
            view = "delayed" if self.spectator_delay else "live"
            object.__setattr__(self, "spectator_view", view)
        if self.practice:  # a practice room is one private seat (and maybe a ghost's)
            object.__setattr__(self, "capacity", 2 if self.ghost else 1)
            object.__setattr__(self, "private", True)

    def to_dict(self) -> dict[str, Any]:
        """The public and stored form (settings as their dict)."""
        return {
            "settings": self.settings.to_dict(),
            "capacity": self.capacity,
            "private": self.private,
            "time_limit": self.time_limit,
            "rank_by": self.rank_by,
            "quick": self.quick,
            "practice": self.practice,
            "winnable_only": self.winnable_only,
            "spectator_delay": self.spectator_delay,
            "rated": self.rated or not self.private,
            "ghost": self.ghost,
            "spectator_view": self.spectator_view,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RoomOptions:
        """The stored form back (rooms stored before an option existed get its default)."""
        return cls(
            settings=Settings.from_dict(d["settings"]),
            capacity=d["capacity"],
            private=d["private"],
            time_limit=d["time_limit"],
            rank_by=d["rank_by"],
            quick=d.get("quick", False),
            practice=d.get("practice", False),
            winnable_only=d.get("winnable_only", False),
            spectator_delay=d.get("spectator_delay", 0),
            rated=d.get("rated", False) and d["private"],
            ghost=d.get("ghost", False),
            spectator_view=d.get("spectator_view", ""),
        )

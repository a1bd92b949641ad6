"""Key names (the ``{CODE}`` hash tag keeps one room's keys in one Redis Cluster slot);
store/__init__.py lists every key."""

from __future__ import annotations

CHANNEL = "kr:events"  # ``CODE|NODE|JSON`` room events, ``mm:T|NODE|JSON`` quick-match news
EVENTS_KEPT = 500  # events kept per room for resumes and gap fills


def room_key(code: str) -> str:
    return f"room:{{{code}}}"


def moves_key(code: str, player: str) -> str:
    return f"room:{{{code}}}:moves:{player}"


def player_key(who: str, part: str, tagged: bool = False) -> str:
    """``player:WHO:PART``; on a cluster (``tagged``) ``player:{WHO}:PART``, so that a
    player's keys share a slot (their ratings step touches three of them)."""
    return f"player:{{{who}}}:{part}" if tagged else f"player:{who}:{part}"

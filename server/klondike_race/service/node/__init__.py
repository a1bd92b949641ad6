"""A server node (docs/architecture.md): the composition root and lifecycle (node.py), the
connection loop (dispatch.py; one connection's state: conn.py), the rooms with a hub
here and their attendance (registry.py), room changes (rooms.py), and the handlers by
area: lobby.py, race.py (moves), ghosts.py, assist.py (the solver's help), challenges.py
(with leaderboards.py), arenas.py (with arena_table.py, an arena's live table), players.py,
replays.py, ratings.py; the sweeper, the solver's processes
(solving.py), Cluster pub/sub (shards.py), background tasks (tasks.py)."""

from .node import Node

__all__ = ["Node"]

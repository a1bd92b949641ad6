"""A server node: its lifecycle (node.py), the connection loop (connection.py) and the
command handlers by area: lobby.py, race.py (moves), assist.py (the solver's help)."""

from .node import Node

__all__ = ["Node"]

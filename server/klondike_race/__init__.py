"""Klondike Race: a real-time competitive Klondike solitaire server.

``klondike_race.engine`` is the pure rules engine; everything else is built on it.
"""

__version__ = "0.1.0"

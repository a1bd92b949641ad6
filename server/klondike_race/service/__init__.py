"""The race service, a thin shell around the engine (every rules decision is the
engine's or the pure ``domain``'s; docs/architecture.md):

- ``domain/``: room options, phases and transitions, the ranking, the move-log entry, who
  may see what, when the solver may help, challenges, ratings, arenas; pure, no I/O, no
  clock;
- ``wire/``: typed client and server messages, the one decode point and the one encoder;
  the room events' shapes;
- ``store/``: Redis, by what it stores (rooms, move logs, matchmaking, sweeping,
  accounts, ratings, challenges, arenas);
- ``hub.py`` (one room's events on one node, through ``boards``, ``standings``,
  ``delay``), ``fanout.py`` and ``transport.py`` (sending), ``http.py`` (routes),
  ``metrics.py``, ``contracts.py`` (what a hub needs of its node), ``clock.py``;
- ``node/``: a server process: the composition root and lifecycle, the connection loop,
  handlers by area (lobby, race, assist, challenges, arenas), room operations, the solver,
  the sweeper;
- ``cli.py``: the ``serve`` command; ``config.py``, ``embedded.py``, ``logs.py``.
"""

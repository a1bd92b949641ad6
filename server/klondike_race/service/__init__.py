"""The race service, a thin shell around the engine (every rules decision is the
engine's or the pure ``domain``'s):

- ``domain/``: room options, phases and transitions, the ranking, the move-log entry, who
  may see what, when the solver may help; pure, no I/O, no clock;
- ``wire/``: typed client messages, the one decode point and the one encoder;
- ``store/``: Redis, by what it stores (rooms, move logs, matchmaking, sweeping,
  accounts, ratings);
- ``hub.py`` (one room's events on one node, through ``boards``, ``standings``,
  ``delay``), ``fanout.py`` and ``transport.py`` (sending), ``http.py`` (routes),
  ``metrics.py``;
- ``node/``: a server process: lifecycle, the connection loop, handlers by area (lobby,
  race, assist), room operations, the solver, the sweeper;
- ``cli.py``: the ``serve`` command; ``config.py``, ``embedded.py``, ``logs.py``.
"""

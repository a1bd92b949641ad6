"""The service's pure domain: rooms and their options, phases and transitions, the
ranking, the move-log entry, who may see what, and when the solver may help.

Nothing here does I/O or reads the clock: the time comes in as an argument.
"""

"""The race service: the wire protocol, rooms and races, the Redis store, the WebSocket
app, operations (logs, health, metrics) and the ``serve`` command. It is a thin shell
around the engine: every rules decision comes from ``klondike_race.engine``."""

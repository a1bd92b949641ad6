"""A room's events as stored (``room:{CODE}:events``) and published to the other nodes:
one ``TypedDict`` a kind, ``type`` first. The store adds the version ``v`` to what it
keeps and publishes; a hub delivers them in version order (hub.py), and a resuming
connection is sent those it missed (encode.py, ``stored_event``)."""

from typing import Any, Literal, NamedTuple, NotRequired, TypedDict

from ...engine import BoardView, Game, board_view
from ..domain import ranking
from ..domain.progress import of_board


class Progress(TypedDict):
    """A player's move (or resignation): who, their progress after it, its sequence
    number and its move-log entry (``MOVE@MS``: a node that shows boards plays it)."""

    type: Literal["progress"]
    player: str
    progress: dict[str, Any]
    seq: int
    entry: str


class Entered(NamedTuple):
    """What one entry of a player's move log makes: their board after it, the event
    telling the room (``body``) and the player's ranking key, as the log's append stores
    them."""

    board: BoardView
    body: Progress
    key: int


def entered(player: str, game: Game, seq: int, entry: str, at_ms: int, rank_by: str) -> Entered:
    """The stored event of ``entry`` (``game`` already played to it, at race time
    ``at_ms``): the event names the entry, not the board (a node that shows boards keeps
    every player's game and plays the entry itself: boards.py)."""
    board = board_view(game, at_ms)  # it includes the progress fields
    progress = of_board(board, game.last_ms)
    body: Progress = {
        "type": "progress",
        "player": player,
        "progress": progress,
        "seq": seq,
        "entry": entry,
    }
    return Entered(board, body, ranking.rank_key(progress, rank_by, game.last_ms))


class Results(TypedDict):
    """A finished race's final progress and boards, by player id."""

    progress: dict[str, dict[str, Any]]
    boards: dict[str, Any]


class Room(TypedDict):
    """A change of the room: the room as anyone may know it (``RoomView.to_json``), and
    the results when it finished the race."""

    type: Literal["room"]
    room: dict[str, Any]
    results: NotRequired[Results]


class Analysis(TypedDict):
    type: Literal["analysis"]
    analysis: dict[str, Any]


class Played(TypedDict):
    """What a finished room's games did to each player's play statistics, by seat id
    (node/played.py): each player is sent their own."""

    type: Literal["played"]
    played: dict[str, Any]


class Spectators(TypedDict):
    """The room's spectators, every node's counted."""

    type: Literal["spectators"]
    count: int


Event = Progress | Room | Analysis | Played | Spectators

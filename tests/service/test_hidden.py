"""Spectators, and the hidden-card check: over many random games, no message a racer or a
spectator receives names a card that was face down (or in the stock) for them then; in
rated rooms a spectator gets no card at all before the results (outlines only)."""

from __future__ import annotations

import asyncio
import random

import orjson
import redis

from klondike_race.engine import NAMES, Deal, Game, Settings, board_view
from klondike_race.service.store import room_key

from .conftest import Client

CARD_NAMES = set(NAMES)


def hidden(game: Game) -> set[str]:
    out = {NAMES[c] for c in game.stock}
    for col, down in zip(game.columns, game.down, strict=True):
        out.update(NAMES[c] for c in col[:down])
    return out


def card_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value in CARD_NAMES else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in card_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in card_strings(v)]
    return []


class Bot:
    def __init__(self, client: Client, game: Game, rng: random.Random, moves: int) -> None:
        self.client, self.game, self.rng, self.moves = client, game, rng, moves
        self.history: list[set[str]] = [hidden(game)]  # hidden set after n moves
        self.over_at: int | None = None  # index in client.seen when own game ended
        self.checked = 0

    def check_new(self) -> None:
        """Scan messages received since the last check against the current hidden set."""
        secret = hidden(self.game)
        while self.checked < len(self.client.seen):
            message = self.client.seen[self.checked]
            self.checked += 1
            if self.over_at is not None:
                continue
            leaked = set(card_strings(message)) & secret
            assert not leaked, (
                list(message),
                message.get("board"),
                leaked,
                self.client.player,
                self.game.status,
            )
            if message["type"] in ("progress", "welcome", "room", "start"):
                assert "boards" not in message and "board" not in {
                    k for k in message if message.get("player") != self.client.player
                }

    async def run(self) -> None:
        c = self.client
        for _ in range(self.moves):
            if self.game.over:
                break
            legal = self.game.legal_moves()
            move = self.rng.choice(legal) if legal else None
            if move is None:
                break
            fields = move.to_wire()
            await c.send("move", seq=c.seq + 1, **fields)
            # scan what arrives before the ack with the position before this move
            while True:
                message = await c.recv()
                if message["type"] == "ack":
                    break
                self.checked = len(c.seen) - 1
                self._check_one(message, hidden(self.game))
                self.checked += 1
            self.game.play(move, 0)
            self.history.append(hidden(self.game))
            c.seq += 1
            self.check_new()
            if self.game.over:
                self.over_at = len(c.seen)
            await asyncio.sleep(self.rng.random() * 0.004)
        if not self.game.over:
            await c.send("resign", seq=c.seq + 1)
            await c.expect("ack")
            self.check_new()
            self.game.resign()
            self.over_at = len(c.seen)

    def _check_one(self, message: dict, secret: set[str]) -> None:
        if self.over_at is None:
            leaked = set(card_strings(message)) & secret
            assert not leaked, (message["type"], leaked)


def check_spectator(messages: list[dict], bots: dict[str, Bot]) -> int:
    checked = 0

    def board_ok(player: str, board: dict) -> None:
        nonlocal checked
        secret = bots[player].history[board["moves"]]
        leaked = set(card_strings(board)) & secret
        assert not leaked, (player, board["moves"], leaked)
        checked += 1

    for message in messages:
        rest = dict(message)
        if "board" in rest:
            board_ok(message["player"], rest.pop("board"))
        for player, board in (rest.pop("boards", None) or {}).items():
            board_ok(player, board)
        assert not card_strings(rest), message
    return checked


async def play_room(
    port: int,
    rds: redis.Redis,
    rng: random.Random,
    racers: int,
    spectators: int,
    draw: int,
    rated: bool = False,
) -> None:
    """A race of random bots watched by ``spectators``: a private unrated room, whose
    spectators see every board live; ``rated``: a public room, where they see outlines."""
    host = await Client.open(port)
    welcome = await host.request(
        "create", "welcome", name="h", capacity=racers, settings={"draw": draw}, private=not rated
    )
    assert welcome["room"]["spectator_view"] == ("outline" if rated else "live")
    code = welcome["room"]["code"]
    state = orjson.loads(rds.hget(room_key(code), "state"))
    seed = state["deal"]["seed"]
    clients = [host]
    for i in range(1, racers):
        c = await Client.open(port)
        await c.request("join", "welcome", code=code, name=f"r{i}")
        clients.append(c)
    watchers = []
    for _ in range(spectators):
        w = await Client.open(port)
        assert (await w.request("watch", "welcome", code=code))["type"] == "welcome"
        watchers.append(w)
    for c in clients:
        await c.send("ready")
    for c in clients:
        await c.expect("start")
    bots = {
        c.player: Bot(c, Game(Deal.from_seed(seed), Settings(draw=draw)), rng, rng.randint(20, 120))
        for c in clients
    }
    for bot in bots.values():
        bot.check_new()
    await asyncio.gather(*(bot.run() for bot in bots.values()))
    for w in watchers:
        room = await w.expect("room")
        while room["room"]["phase"] != "finished":
            room = await w.expect("room")
        await w.drain(0.05)
        before_results = w.seen[: w.seen.index(room)]
        assert seed not in orjson.dumps(before_results).decode()
        assert check_spectator(w.seen, bots) > 0
        # spectators see every player's live boards, or their outlines (a deal stuck from
        # the start ends the race before any move), and the count of spectators
        moved = any(bot.game.moves for bot in bots.values())
        assert any(m["type"] == "progress" and "board" in m for m in w.seen) == moved
        if rated:  # no card at all while the race ran: outlines only
            assert not card_strings(before_results), before_results
            shown = [m["board"] for m in before_results if "board" in m] + [
                b for m in before_results for b in (m.get("boards") or {}).values()
            ]
            assert shown and all(b["outline"] for b in shown)
        assert any(m["type"] == "spectators" and m["count"] == spectators for m in w.seen)
    for c in clients:
        await c.drain(0.02)
        end = next(
            i
            for i, m in enumerate(c.seen)
            if m["type"] == "room" and m["room"]["phase"] == "finished"
        )
        assert seed not in orjson.dumps(c.seen[:end]).decode()
        assert any(m["type"] == "spectators" for m in c.seen)
    # the final boards the spectators got match an independent replay
    for player, bot in bots.items():
        final = room["boards"][player]
        assert final["columns"] == board_view(bot.game)["columns"]
    for c in clients + watchers:
        await c.close()


async def test_no_hidden_card_ever_reaches_a_racer_or_a_spectator(node, redis_url) -> None:
    rng = random.Random(20261129)
    rds = redis.Redis.from_url(redis_url)
    shapes = [(2, 1, 1), (3, 2, 3), (2, 2, 1), (3, 1, 3), (4, 2, 1), (2, 1, 3)]
    await asyncio.gather(
        *(
            play_room(node.port, rds, random.Random(rng.random()), *shape, rated=rated)
            for shape in shapes
            for rated in (False, True)
        )
    )


async def test_batched_spectator_updates_arrive_in_order_and_hide_nothing(redis_url) -> None:
    from klondike_race.service.node import Node

    from .conftest import make_config

    node = Node(make_config(redis_url, spectator_batch_ms=40), redis_url)
    port = await node.start()
    try:
        rng = random.Random(7)
        rds = redis.Redis.from_url(redis_url)
        await asyncio.gather(
            *(
                play_room(port, rds, random.Random(rng.random()), *shape, rated=rated)
                for shape in [(3, 5, 1), (2, 2, 3)]
                for rated in (False, True)
            )
        )
    finally:
        await node.stop()

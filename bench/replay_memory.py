"""Redis memory per stored game: a finished 2-player race of ~150 moves each, and a
finished challenge attempt of ~150 moves, as kept for their replays (``MEMORY USAGE`` of
every key of the room, summed), and the size of their ``/api/replays/CODE`` answer.

Run: ``.venv/bin/python bench/replay_memory.py [--moves 150]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.client import connect

from klondike_race.engine import Deal, Game, Settings
from klondike_race.service.clock import Clock
from klondike_race.service.config import Config
from klondike_race.service.domain.options import RoomOptions
from klondike_race.service.embedded import EmbeddedRedis
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.node.rooms import SeatToken


async def answer(ws: Any, *types: str) -> dict[str, Any]:
    while True:
        msg = orjson.loads(await ws.recv())
        if msg["type"] in types:
            return msg


async def play(ws: Any, game: Game, moves: int, rng: random.Random) -> None:
    for seq in range(1, moves + 1):
        legal = [m for m in game.legal_moves() if str(m) != "u"]
        if not legal or game.over:
            break
        move = rng.choice(legal)
        await ws.send(orjson.dumps({"type": "move", "seq": seq, **move.to_wire()}))
        got = await answer(ws, "ack", "refused", "error")
        assert got["type"] == "ack", got
        game.play(move)
    await ws.send(orjson.dumps({"type": "resign", "seq": game.moves + 1}))
    await answer(ws, "ack", "refused")


async def memory(node: Node, code: str) -> tuple[int, int, int]:
    """(keys, bytes of MEMORY USAGE summed, bytes of the replay JSON)."""
    keys = [k async for k in node.redis.scan_iter(match=f"room:{{{code}}}*")]
    total = 0
    for key in sorted(keys):
        used = int(await node.redis.memory_usage(key, samples=0) or 0)
        print(f"  {key.decode():32s} {used:8,d} bytes")
        total += used
    status, body = await node.replays.http(code, "")
    assert status == 200, body
    return len(keys), total, len(orjson.dumps(body))


async def main(moves: int) -> None:
    configure(json=False, level="warning")
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp)).start()
        config = Config(
            port=0, redis_url=redis.url, countdown_ms=100, dev=True, rate=1e6, burst=1e6
        )
        node = Node(config, redis.url)
        port = await node.start()
        url = f"ws://127.0.0.1:{port}/"
        try:
            # a race: two players, ~moves each
            async with connect(url) as a, connect(url) as b:
                await a.send(orjson.dumps({"type": "create", "name": "ann", "deal": {"seed": "7"}}))
                code = (await answer(a, "welcome"))["room"]["code"]
                await b.send(orjson.dumps({"type": "join", "code": code, "name": "bob"}))
                await answer(b, "welcome")
                for ws in (a, b):
                    await ws.send(b'{"type": "ready"}')
                for ws in (a, b):
                    await answer(ws, "start")
                rng = random.Random(1)
                await asyncio.gather(
                    play(a, Game(Deal.from_seed("7"), Settings()), moves, rng),
                    play(b, Game(Deal.from_seed("7"), Settings()), moves, random.Random(2)),
                )
                await asyncio.sleep(0.3)
            race = await memory(node, code)
            # a challenge attempt: one seat, its challenge closed already
            room, pid, secret = await node.rooms.create_seated(
                "cat",
                RoomOptions(capacity=1, private=True, time_limit=1800),
                {"seed": "7"},
                who="g-" + "0" * 32,
                challenge="bench/0",
                reveal_at=Clock().now_ms() - 1,
            )
            async with connect(url) as c:
                token = str(SeatToken(room.code, pid, secret))
                await c.send(orjson.dumps({"type": "resume", "token": token}))
                await answer(c, "welcome", "resumed")
                await play(c, Game(Deal.from_seed("7"), Settings()), moves, random.Random(3))
                await asyncio.sleep(0.3)
            attempt = await memory(node, room.code)
        finally:
            await node.stop()
            redis.stop()
    for what, (keys, used, size) in (("race, 2 players", race), ("challenge attempt", attempt)):
        print(
            f"{what:18s} ~{moves} moves each: {keys} keys, {used:,} bytes in Redis"
            f" (MEMORY USAGE), replay JSON {size:,} bytes"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=150)
    asyncio.run(main(parser.parse_args().moves))

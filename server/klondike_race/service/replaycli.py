"""``klondike-race replay CODE --redis-url URL`` (a finished room, read from Redis as the
server reads it) or ``klondike-race replay FILE`` (a game record, docs/notation.md, or a
replay saved from ``/api/replays/CODE``): the race move by move, one line each: race
time, player, name, move, cards home after it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from ..engine import EngineError, GameRecord
from .clock import Clock
from .domain import replay as rp
from .domain.room import Room
from .store.keys import moves_key, room_key


def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("replay", help="print a finished race move by move")
    p.add_argument("source", help="a room code (with --redis-url), or a record/replay file")
    p.add_argument("--redis-url", help="the server's Redis (REDIS_URL)")
    p.set_defaults(run=_replay)


def clock(ms: int) -> str:
    return f"{ms // 60000}:{ms % 60000 / 1000:04.1f}"


def rows(replay: dict[str, Any]) -> Iterator[tuple[int, str, str, str, int]]:
    """(at_ms, player, name, move, foundation) of each step of a replay's timeline."""
    players = {p["id"]: p for p in replay["players"]}
    boards = {pid: p["initial"] for pid, p in players.items()}
    seen = dict.fromkeys(players, 0)
    for pid in replay["timeline"]:
        frame = players[pid]["frames"][seen[pid]]
        seen[pid] += 1
        boards[pid] = rp.apply_delta(boards[pid], frame["board"])
        yield frame["at_ms"], pid, players[pid]["name"], frame["move"], boards[pid]["foundation"]


def from_redis(code: str, url: str) -> dict[str, Any] | str:
    import redis

    client = redis.Redis.from_url(url)
    try:
        raw = client.hget(room_key(code), "state")
        if raw is None:
            return f"no room {code} (unknown, or expired)"
        room = Room.from_json(json.loads(raw))
        parent = None
        if room.parent:
            got = client.hget(room_key(room.parent), "state")
            parent = Room.from_json(json.loads(got)) if got else None
        now = Clock().now_ms()
        refused = rp.refusal(room, parent, now)
        if refused is not None:
            return str(refused[1])
        logs = {
            s.id: [m.decode() for m in client.lrange(moves_key(code, s.id), 0, -1)]  # type: ignore[union-attr]
            for s in room.seats
        }
        return rp.replay(room, logs, now)
    finally:
        client.close()


def _replay(args: argparse.Namespace) -> int:
    source: str = args.source
    url = args.redis_url or os.environ.get("REDIS_URL")
    if os.path.isfile(source):
        try:
            with open(source, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as err:
            print(f"cannot read {source}: {err}", file=sys.stderr)
            return 2
        if isinstance(data, dict) and "players" in data and "timeline" in data:
            return _print(data)
        try:
            record = GameRecord.from_json(data)
        except EngineError as err:
            print(f"not a game record ({err.reason}): {err}", file=sys.stderr)
            return 2
        print(f"record: deal {record.deal.id}   {record.settings}")
        for i, move, game in record.replay():
            at = record.times[i] if record.times else 0
            print(f"{clock(at):>8}  {'-':3}  {'-':12}  {move!s:8}  {game.found_count:2d}")
        return 0
    if not rp.valid_code(source):
        print(f"{source}: neither a file nor a room code", file=sys.stderr)
        return 2
    if not url:
        print("a room code needs --redis-url (or REDIS_URL)", file=sys.stderr)
        return 2
    got = from_redis(source, url)
    if isinstance(got, str):
        print(got, file=sys.stderr)
        return 1
    return _print(got)


def _print(replay: dict[str, Any]) -> int:
    room = replay["room"]
    reveal = room.get("reveal") or {}
    print(f"room {replay['code']}   deal {reveal.get('deal', '?')}   {room['settings']}")
    print(f"{'time':>8}  {'who':3}  {'name':12}  {'move':8}  home")
    for at, pid, name, move, home in rows(replay):
        print(f"{clock(at):>8}  {pid:3}  {name[:12]:12}  {move:8}  {home:2d}")
    for p in replay["players"]:
        final = p["final"]
        print(
            f"# {p['id']} {p['name']}: {final['status']}, {final['foundation']} home,"
            f" {final['moves']} moves"
        )
    return 0

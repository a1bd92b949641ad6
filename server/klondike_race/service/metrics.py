"""Prometheus metrics of one node, made with prometheus-client in a registry of its own
(two nodes in one process, as in the tests, keep apart), with the process's memory, CPU,
file descriptors and garbage collections, and how long each collection held it."""

from __future__ import annotations

import bisect
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
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


class _GCPauses(Collector):
    """How long each garbage collection held the process, by generation (``gc.callbacks``,
    installed once a process): a collection stops everything, the moves waiting for their
    acknowledgement included. Process-wide, as the collector is: every node's registry in
    one process reports the same."""

    counts: ClassVar[list[list[int]]] = [[0] * (len(BUCKETS) + 1) for _ in range(3)]
    sums: ClassVar[list[float]] = [0.0, 0.0, 0.0]  # (counts: per generation, per bucket)
    started = 0.0

    @classmethod
    def timed(cls, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            cls.started = time.perf_counter()
            return
        took = time.perf_counter() - cls.started
        generation = info["generation"]
        cls.counts[generation][bisect.bisect_left(BUCKETS, took)] += 1
        cls.sums[generation] += took

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(
            "kr_gc_pause_seconds",
            "How long each garbage collection held the process, by generation.",
            labels=["generation"],
        )
        for generation, counts in enumerate(self.counts):
            cumulative, buckets = 0, []
            for bound, count in zip([*map(repr, BUCKETS), "+Inf"], counts, strict=True):
                cumulative += count
                buckets.append((bound, cumulative))  # (as the other histograms' bounds)
            family.add_metric([str(generation)], buckets, self.sums[generation])
        yield family


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
            "Move received to acknowledgement sent.",
            buckets=BUCKETS,
            registry=registry,
        )
        self.redis = Histogram(
            "kr_redis_latency_seconds", "One Redis round trip.", buckets=BUCKETS, registry=registry
        )
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        registry.register(_GCPauses())
        if _GCPauses.timed not in gc.callbacks:
            gc.callbacks.append(_GCPauses.timed)

    def refused(self, reason: str) -> None:
        self.moves_refused.labels(reason).inc()

    def error(self, reason: str) -> None:
        self.errors.labels(reason).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)

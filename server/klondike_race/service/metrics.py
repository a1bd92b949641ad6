"""Prometheus text-format metrics, kept in the process (each node exports its own)."""

from __future__ import annotations

import bisect

_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Histogram:
    def __init__(self, name: str, help: str) -> None:
        self.name, self.help = name, help
        self.counts = [0] * (len(_BUCKETS) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(_BUCKETS, seconds)] += 1
        self.sum += seconds
        self.count += 1

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        total = 0
        for bound, n in zip(_BUCKETS, self.counts, strict=False):
            total += n
            lines.append(f'{self.name}_bucket{{le="{bound}"}} {total}')
        lines.append(f'{self.name}_bucket{{le="+Inf"}} {self.count}')
        lines.append(f"{self.name}_sum {self.sum:.6f}")
        lines.append(f"{self.name}_count {self.count}")
        return lines


class Metrics:
    def __init__(self) -> None:
        self.connections = 0
        self.connections_total = 0
        self.rooms = 0
        self.moves_accepted = 0
        self.moves_refused: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.ack = Histogram("kr_ack_latency_seconds", "Move received to acknowledgement sent.")
        self.redis = Histogram("kr_redis_latency_seconds", "One Redis round trip.")

    def refused(self, reason: str) -> None:
        self.moves_refused[reason] = self.moves_refused.get(reason, 0) + 1

    def error(self, reason: str) -> None:
        self.errors[reason] = self.errors.get(reason, 0) + 1

    def render(self) -> str:
        lines = [
            "# HELP kr_connections Open WebSocket connections.",
            "# TYPE kr_connections gauge",
            f"kr_connections {self.connections}",
            "# HELP kr_connections_total WebSocket connections accepted.",
            "# TYPE kr_connections_total counter",
            f"kr_connections_total {self.connections_total}",
            "# HELP kr_rooms Rooms with a connection on this node.",
            "# TYPE kr_rooms gauge",
            f"kr_rooms {self.rooms}",
            "# HELP kr_moves_accepted_total Moves accepted and stored.",
            "# TYPE kr_moves_accepted_total counter",
            f"kr_moves_accepted_total {self.moves_accepted}",
            "# HELP kr_moves_refused_total Moves refused, by reason.",
            "# TYPE kr_moves_refused_total counter",
        ]
        lines += [
            f'kr_moves_refused_total{{reason="{r}"}} {n}'
            for r, n in sorted(self.moves_refused.items())
        ]
        lines += [
            "# HELP kr_errors_total Client messages answered with an error, by reason.",
            "# TYPE kr_errors_total counter",
        ]
        lines += [f'kr_errors_total{{reason="{r}"}} {n}' for r, n in sorted(self.errors.items())]
        lines += self.ack.render() + self.redis.render()
        return "\n".join(lines) + "\n"

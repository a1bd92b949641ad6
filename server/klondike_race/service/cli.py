"""The ``serve`` command: ``klondike-race serve [--host H] [--port P] [--redis-url URL] ...``.

Flags override environment variables (docs/operations.md). Without a Redis URL a private
redis-server is started in the data folder and stopped on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import signal
import sys

from .config import Config


def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("serve", help="run the race server (WebSocket + HTTP)")
    p.add_argument("--host", help="address to listen on (KR_HOST, default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (KR_PORT, default 8765; 0 = any free)")
    p.add_argument("--redis-url", help="Redis to use (REDIS_URL); default: embedded")
    p.add_argument("--data-dir", help="embedded redis-server folder (KR_DATA_DIR, data)")
    p.add_argument("--countdown-ms", type=int, help="countdown before a race (KR_COUNTDOWN_MS)")
    p.add_argument(
        "--dev", action="store_true", default=None, help="allow explicit deals in create (KR_DEV)"
    )
    p.add_argument(
        "--uvloop", action="store_true", default=None, help="run on uvloop if installed (KR_UVLOOP)"
    )
    p.add_argument("--log-json", action="store_true", default=None, help="JSON log lines")
    p.set_defaults(run=_serve)


def config_from_args(args: argparse.Namespace) -> Config:
    config = Config.from_env()
    for name in (
        "host",
        "port",
        "redis_url",
        "data_dir",
        "countdown_ms",
        "dev",
        "uvloop",
        "log_json",
    ):
        value = getattr(args, name, None)
        if value is not None:
            setattr(config, name, value)
    return config


def tune_gc() -> None:
    """Fewer, cheaper garbage collections: the objects of startup are frozen out of the
    collector, and collections start after 20,000 net allocations instead of 700, so a
    full collection (tens of ms with thousands of connections) is rare instead of every
    few seconds. Measured: the worst pause under 1,000 racers went from ~100 ms to ~4 ms."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)


async def run(config: Config, ready: asyncio.Future[int] | None = None) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    from .embedded import EmbeddedRedis
    from .logs import configure
    from .node import Node

    configure(config.log_json, config.log_level)
    embedded = None
    url = config.redis_url
    if not url and not config.sentinels:
        embedded = EmbeddedRedis(config.data_dir, appendfsync=config.appendfsync).start()
        url = embedded.url
    node = Node(config, url or "")
    try:
        port = await node.start()
        tune_gc()
        host = "localhost" if config.host in ("127.0.0.1", "0.0.0.0", "::") else config.host
        print(f"Klondike Race is running: open http://{host}:{port}/", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        if ready is not None:
            ready.set_result(port)
        await stop.wait()
    finally:
        await node.stop()
        if embedded is not None:
            embedded.stop()


def _serve(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    if config.uvloop:
        try:
            import uvloop  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            print("uvloop is not installed; using asyncio", file=sys.stderr)
        else:
            uvloop.run(run(config))
            return 0
    asyncio.run(run(config))
    return 0

"""A TCP proxy between Chromium and the server that can stop passing traffic without
closing anything: the connection a phone keeps while it changes networks, or a stalled
proxy. Runs its own asyncio loop in a thread; the test calls ``freeze`` and ``thaw``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


class _Link:
    def __init__(self) -> None:
        self.dead: set[str] = set()  # the ways ("up", "down") whose bytes are dropped
        self.gate = asyncio.Event()  # closed while a link made during a freeze waits
        self.writers: list[asyncio.StreamWriter] = []


class StallProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self.links: list[_Link] = []
        self.frozen = False
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server: asyncio.Server | None = None

    def start(self) -> StallProxy:
        self.thread.start()
        self.server = self._call(self._listen)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        async def close() -> None:
            assert self.server is not None
            self.server.close()
            for link in self.links:
                for w in link.writers:
                    w.transport.abort()
            # the aborts' connection_lost run on this loop: before it stops, else the
            # sockets are only found unclosed later, by another test's garbage collection
            for _ in range(3):
                await asyncio.sleep(0)

        self._call(close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    def _call(self, fn: Callable[[], Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(fn(), self.loop).result(10)

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._handle, "127.0.0.1", 0)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def freeze(self, ways: tuple[str, ...] = ("up", "down")) -> None:
        """Every open link stops passing bytes on ``ways`` (they are dropped: a dead
        path), nothing closes; links made meanwhile wait (their bytes kept) for ``thaw``."""

        async def go() -> None:
            self.frozen = True
            for link in self.links:
                link.dead.update(ways)

        self._call(go)

    def thaw(self) -> None:
        """The network is back: the links that died stay dead (closed now, as a timed
        out connection would be), the ones made during the freeze go through."""

        async def go() -> None:
            self.frozen = False
            for link in self.links:
                if link.dead:
                    for w in link.writers:
                        w.transport.abort()
                link.gate.set()

        self._call(go)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = _Link()
        if not self.frozen:
            link.gate.set()
        self.links.append(link)
        link.writers = [writer]  # (stop closes it while the server's side is being opened)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        link.writers.append(up_writer)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, way: str) -> None:
            try:
                while data := await src.read(65536):
                    await link.gate.wait()
                    if way in link.dead:
                        continue
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort() if way in link.dead else dst.close()

        await asyncio.gather(pipe(reader, up_writer, "up"), pipe(up_reader, writer, "down"))

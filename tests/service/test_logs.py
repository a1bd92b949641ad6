"""The service's log lines: where they go, and what a line that cannot be written does."""

from __future__ import annotations

import io
import sys

import orjson
import pytest
import structlog

from klondike_race.service.logs import configure


def test_a_line_goes_to_stderr_as_it_is_when_the_line_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure(json=True, level="info")
    log = structlog.get_logger("klondike_race").bind(conn="c1")
    first, later = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    log.info("one")
    monkeypatch.setattr(sys, "stderr", later)
    log.warning("two")
    assert [orjson.loads(line)["event"] for line in first.getvalue().splitlines()] == ["one"]
    lines = [orjson.loads(line) for line in later.getvalue().splitlines()]
    assert [(line["event"], line["conn"], line["level"]) for line in lines] == [
        ("two", "c1", "warning")
    ]
    configure(json=False, level="warning")


def test_a_line_that_cannot_be_written_is_dropped_and_the_work_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stream closed under the server (here before it configured its logs, as a test's
    # captured output is once the test is over): the call that logs goes on.
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    configure(json=False, level="warning")
    log = structlog.get_logger("klondike_race").bind(conn="c1")
    log.warning("rate limit: closing")
    log.error("failed", exc_info=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    log.warning("written")
    assert "written" in sys.stderr.getvalue()

"""The browser contexts handed from test to test (conftest.Contexts): the next test gets
the context as a new one would be, or a new one."""

from __future__ import annotations

import re

from tests.client.conftest import DESKTOP, PHONE, Contexts
from tests.servers import ServerProcess

OPTIONS = {"reduced_motion": "reduce", "service_workers": "block"}


def stored(page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")


def test_a_context_handed_on_keeps_nothing_of_the_last_test(
    contexts: Contexts, server: ServerProcess
) -> None:
    first = contexts.take(server.url, DESKTOP, False, **OPTIONS)
    first.open()
    first.set_name("Alice")
    kept = stored(first.page)
    assert kept["kr.name"] == '"Alice"' and len(kept) >= 2  # the name and the guest's token
    first.context.route(re.compile(r"/api/"), lambda route: route.abort())
    first.context.grant_permissions(["clipboard-read"])
    first.context.add_cookies([{"name": "kept", "value": "1", "url": server.url}])
    first.context.set_offline(True)
    tab = first.context.new_page()
    contexts.give_back(first, passed=True)

    second = contexts.take(server.url, PHONE, False, **OPTIONS)
    assert (second.context, second.page) == (first.context, first.page)
    assert tab.is_closed() and second.context.pages == [second.page]
    assert second.page.viewport_size == PHONE
    assert second.context.cookies() == []
    second.open()  # online again
    again = stored(second.page)
    assert "kr.name" not in again and not set(kept.items()) & set(again.items())
    assert second.page.input_value("#name") == ""
    answer = second.page.evaluate("async () => (await fetch('/api/arenas')).status")
    assert answer == 200  # the route is gone
    state = "navigator.permissions.query({name: 'clipboard-read'}).then((p) => p.state)"
    assert second.page.evaluate(state) == "prompt"
    contexts.give_back(second, passed=True)

    other = contexts.take(
        server.url, DESKTOP, False, **{**OPTIONS, "reduced_motion": "no-preference"}
    )
    assert other.context is not first.context  # other options: another context
    contexts.give_back(other, passed=True)


def test_a_context_is_closed_after_a_failure_or_what_cannot_be_undone(
    contexts: Contexts, server: ServerProcess
) -> None:
    def handed_on(change) -> bool:
        player = contexts.take(server.url, DESKTOP, False, **OPTIONS)
        passed = change(player)
        contexts.give_back(player, passed)
        closed = player.page.is_closed()
        if not closed:  # take it back, so that the next case gets a new one
            assert contexts.take(server.url, DESKTOP, False, **OPTIONS).page is player.page
            player.context.close()
        return not closed

    assert handed_on(lambda player: True)
    assert not handed_on(lambda player: False)  # the test failed
    assert not handed_on(lambda player: player.page.on("console", lambda m: None) or True)
    assert not handed_on(lambda player: player.wire() and True)  # a WebSocket route
    fresh = contexts.take(server.url, DESKTOP, True, **OPTIONS)
    contexts.give_back(fresh, passed=True)
    assert fresh.page.is_closed()

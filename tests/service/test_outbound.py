"""docs/protocol.md's examples of server messages agree with their shapes
(wire/outbound.py): every field an example shows is one of its type's shape, and every
field the shape requires shows in one of the type's examples."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from klondike_race.service import wire as P
from klondike_race.service.domain.errors import ServiceError
from klondike_race.service.wire import outbound

ROOT = Path(__file__).resolve().parents[2]

# type -> its shape
SHAPES: dict[str, typing.Any] = {
    typing.get_args(typing.get_type_hints(shape)["type"])[0]: shape
    for shape in typing.get_args(outbound.ServerMessage)
}

# a JSON string or a bracket or colon: what the keys of an example are read from (the
# docs' examples elide with "…", so they are not all JSON)
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')


def examples(text: str) -> Iterator[tuple[str, str | None, list[str]]]:
    """Each object at the top of a ```json block: its text, its ``type`` and its keys."""
    for block in re.findall(r"^```json\n(.*?)^```", text, re.S | re.M):
        tokens = list(TOKEN.finditer(block))
        stack: list[str] = []
        start, kind, keys = 0, None, []
        for i, token in enumerate(tokens):
            t = token.group()
            if t in "{[":
                if not stack:
                    start, kind, keys = token.start(), None, []
                stack.append(t)
            elif t in "}]":
                stack.pop()
                if not stack:
                    yield block[start : token.end()], kind, keys
            elif t != ":" and stack == ["{"] and tokens[i + 1].group() == ":":
                keys.append(orjson.loads(t))
                if keys[-1] == "type" and tokens[i + 2].group().startswith('"'):
                    kind = orjson.loads(tokens[i + 2].group())


def a_client_message(text: str) -> bool:
    """Whether a documented example is a client's (some types are both: ``start``,
    ``hint``, ``rooms``, ``challenges``, ``replay``): the decoder accepts it."""
    try:
        P.decode(text)
    except ServiceError:
        return False
    return True


def documented() -> dict[str, list[list[str]]]:
    """The keys of each documented server message, by type."""
    out: dict[str, list[list[str]]] = {}
    for text, kind, keys in examples((ROOT / "docs" / "protocol.md").read_text()):
        if kind in SHAPES and not a_client_message(text):
            out.setdefault(kind, []).append(keys)
    return out


DOCUMENTED = documented()


def test_the_examples_are_read_whole() -> None:
    """The reader on its own: nested objects, arrays, elisions and strings with brackets."""
    text = '```json\n{"type": "x", "a": {"type": "y", "b": […]}, "c": "{:}", …}\n{"d": 1}\n```\n'
    assert [(kind, keys) for _, kind, keys in examples(text)] == [
        ("x", ["type", "a", "c"]),
        (None, ["d"]),
    ]
    assert a_client_message('{"type": "start"}')
    assert not a_client_message('{"type": "start", "server_time": 1, "room": {…}}')


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_the_documented_examples_fit_the_shape(kind: str) -> None:
    shape = SHAPES[kind]
    shown = DOCUMENTED.get(kind, [])
    assert shown, f"docs/protocol.md shows no {kind!r} message"
    fields = shape.__required_keys__ | shape.__optional_keys__
    for keys in shown:
        assert set(keys) <= fields, f"{kind}: not in {shape.__name__}: {set(keys) - fields}"
        assert len(set(keys)) == len(keys), f"{kind}: a key twice: {keys}"
    missing = shape.__required_keys__ - {k for keys in shown for k in keys}
    assert not missing, f"{kind}: required, in no example: {missing}"

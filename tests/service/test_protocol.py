"""The one decode point: every malformed message gets a specific reason; nothing crashes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klondike_race.engine import DRAW_MOVE, Move
from klondike_race.service import wire as P
from klondike_race.service.domain.errors import ProtocolError

from .conftest import WIRE_FIELDS


def reason(data) -> str:
    with pytest.raises(ProtocolError) as info:
        P.decode(data)
    return info.value.reason


def test_valid_messages_decode_to_frozen_types() -> None:
    m = P.decode('{"type":"move","seq":3,"from":"col3","to":"col7","count":2}')
    assert m == P.MoveRequest(3, Move.from_wire("col3", "col7", 2))
    assert P.decode(b'{"type":"move","seq":1,"action":"draw"}').move == DRAW_MOVE
    c = P.decode(
        '{"type":"create","name":"ann","settings":{"draw":3},"capacity":4,'
        '"private":true,"time_limit":300,"rank_by":"progress"}'
    )
    assert isinstance(c, P.Create) and c.options.settings.draw == 3 and c.options.capacity == 4
    assert P.decode('{"type":"join","code":"ABCDEF","name":"x"}') == P.Join("ABCDEF", "x")
    no_limit = P.decode('{"type":"create","name":"ann","time_limit":null}')
    assert isinstance(no_limit, P.Create) and no_limit.options.time_limit is None
    with pytest.raises(AttributeError):
        c.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("not json", "bad_json"),
        ("[1,2]", "bad_json"),
        (b"\xff\xfe", "bad_json"),
        ('{"seq":1}', "unknown_type"),
        ('{"type":"fly"}', "unknown_type"),
        ('{"type":7}', "unknown_type"),
        ('{"type":"move","from":"col1","to":"col2"}', "missing_field"),
        ('{"type":"move","seq":"1","action":"draw"}', "bad_field"),
        ('{"type":"move","seq":true,"action":"draw"}', "bad_field"),
        ('{"type":"move","seq":0,"action":"draw"}', "bad_field"),
        ('{"type":"move","seq":1,"action":"fly"}', "bad_field"),
        ('{"type":"move","seq":1,"from":"col9","to":"col2"}', "bad_field"),
        ('{"type":"move","seq":1,"from":"col1","to":"col2","count":14}', "bad_field"),
        ('{"type":"move","seq":1,"action":"draw","extra":1}', "bad_field"),
        ('{"type":"create","name":""}', "bad_field"),
        ('{"type":"create","name":"a","capacity":9}', "bad_field"),
        ('{"type":"create","name":"a","capacity":1}', "bad_field"),
        ('{"type":"create","name":"a","settings":{"draw":2}}', "bad_field"),
        ('{"type":"create","name":"a","time_limit":5}', "bad_field"),
        ('{"type":"create","name":"a","rank_by":"score"}', "bad_field"),
        ('{"type":"create","name":"a","spectator_delay":301}', "bad_field"),
        ('{"type":"create","name":"a","spectator_delay":-1}', "bad_field"),
        ('{"type":"create","name":"a","spectator_delay":1.5}', "bad_field"),
        ('{"type":"join","code":"AB","name":"x"}', "bad_field"),
        ('{"type":"join","name":"x"}', "missing_field"),
        ('{"type":"resume","token":5}', "bad_field"),  # (a string that is no token: bad_token)
        ('{"type":"ping","id":[1]}', "bad_field"),
        # one strict reading: no normalisation the docs do not promise
        ('{"type":"create","name":"a","settings":{"draw":"1"}}', "bad_field"),
        ('{"type":"create","name":"a","settings":{"passes":"1"}}', "bad_field"),
        ('{"type":"create","name":"a","settings":{"undo":1}}', "bad_field"),
        ('{"type":"move","seq":1,"from":"col1","to":"col2","count":null}', "bad_field"),
        ('{"type":"move","seq":null,"action":"draw"}', "bad_field"),
        ('{"type":"join","code":"abcdef","name":"x"}', "bad_field"),
        ('{"type":"join","code":" ABCDEF","name":"x"}', "bad_field"),
        ('{"type":"create","name":null}', "bad_field"),
    ],
)
def test_bad_input_gets_a_specific_reason(data, expected: str) -> None:
    assert reason(data) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(WIRE_FIELDS),
                inner,
                max_size=6,
            )
        ),
        max_leaves=12,
    )
)
def test_every_frame_decodes_to_a_typed_message_or_gets_a_specific_error(value) -> None:
    import json
    import typing

    kinds = typing.get_args(P.Message)
    for data in (
        json.dumps(value),
        json.dumps({"type": "move", "x": value}),
        json.dumps(value if isinstance(value, dict) else {"type": "move"}),
        json.dumps({**value, "type": "create", "name": "ann"} if isinstance(value, dict) else 0),
    ):
        try:
            message = P.decode(data)
        except ProtocolError as err:
            assert err.reason in ("bad_json", "unknown_type", "missing_field", "bad_field")
            assert str(err)
        else:
            assert isinstance(message, kinds)


def test_a_name_with_a_control_character_is_told_so() -> None:
    """A name of the right length with a control character is refused for that, not for
    its length."""
    with pytest.raises(ProtocolError) as info:
        P.decode('{"type":"create","name":"An\\u0000n"}')
    assert info.value.reason == "bad_field" and "control" in str(info.value), info.value
    with pytest.raises(ProtocolError) as info:
        P.decode('{"type":"create","name":"' + "x" * 25 + '"}')
    assert "1 to 24 characters" in str(info.value), info.value

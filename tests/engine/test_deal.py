"""The v1 shuffle and deals. The vectors are frozen: the algorithm must never change."""

from __future__ import annotations

import hashlib

import pytest

from klondike_race.engine import NAMES, Deal, Game, NotationError, shuffle

# Computed once from shuffle v1 (and equal to docs/deal.md). Never regenerate these: a
# different shuffle is a new version (v2), not an edit.
VECTORS = {
    0: "6s 7h 5h Kh As Td 5c 2c 9d Kd 7c 7s Th 8s 6d 4s Jd Jc 8h Qs 3s 6h 2d 5s 2s 4h "
    "Ts 3h 4d Qh 9h 3c 4c 2h 9c Js Qc Ks Ah 3d Ac Qd Ad 5d Tc 9s Jh 6c Kc 8c 8d 7d",
    1: "8s As 3c 2d Ks Qc Th Jc 5c 5s 7h 4c 3h Jh Td 4h 2c Qd Ac 5d 3s 9h 5h 9d 2s 8d "
    "Kd 8h 6h Ad 4s 9s Jd Js Kh 4d Ts 6c Ah Qh Kc 6d Qs 2h 7s 9c 7d 8c 6s 7c 3d Tc",
    42: "Qs Kd 5c 9h 2s Tc 3c Js 6c Kc 2c 3h Jc Jh Ad 2h Ks 5d 2d Td As 4h Ac 7h 4d 6d "
    "Qc Th 8c Ts 7d Kh 9d 8h 5h Jd 9c 8s 9s 7s 6s 7c 5s Qd 8d 3s 3d Ah 6h 4s Qh 4c",
    "daily-2026-11-29": "4c 9h 3s Qc Jd 2h 3d Ah Qd Td Jh Th 5c Kh 8d 2c 3h 8s 7s Ks 7h "
    "Ac As 6d 4d Kd 8h 4s 5s 7c 2s Kc Jc 7d 6h 6c 4h 6s 5h Qh Ts 3c 9d Ad Js 5d 8c Qs "
    "9c Tc 2d 9s",
    "Klondike ♠": "2d 3h 4h 5h 3s 9d 3c 7h 6s Kh Ac Qh Td Js 6h As 5d Ad Kd 9h Jd 4c Qs "
    "8d 9s 4d Th Qc 2s 7c Kc Jc 2h 7d 8h Tc 5s 9c 7s Qd 8c 2c Jh 4s 5c Ks Ah 3d Ts 6d "
    "6c 8s",
    2**64: "Qc Tc 4c Qd Kh Ac Kc 7d Ks Qs As 9c 4s Td 3s Kd Ah 8s 7c 5h 5s 8d 4d 5d 6h 9d "
    "9s Ts Jh 5c 8h 3c 2h Qh 3d Th Jd Js 6d 2c 4h 2d 7h Ad 6s 8c Jc 7s 3h 6c 9h 2s",
    -7: "4c Kh 2h Qd 7c As 9h 5h 4h 7h 8h 5s Th 4s Td Jc 8c 8d 9s 4d Ac 9c Js 2s Ad Qh "
    "Jd Kd 6c 6s 6d Jh Ks 3c Ts 2c Kc 7d 3d 6h Qc 2d 3s 3h Qs 5d Tc 9d Ah 8s 5c 7s",
    "日本語の種": "7d 8c Tc 2c Td 3d 6s 3c 7c Jc 4c 8d 2s Jh Ts Jd Th Ks 2h 9s 5s 6c 7s "
    "Qc Ac 5d 8h Ad Js 4d 9h 2d 3s 9d Kh Qh 9c 8s 5h Qd 6h Kc 7h Kd As 6d Ah 4h 3h Qs "
    "4s 5c",
    "x" * 200: "8c 4h 6s 2c Ah 6h 7s As 8h Kd Ts 9c 3c 5c 3h 2s 5d Qh 7d Js 4d 3d 8s Ks "
    "Jh 7h 6d 9s 2h 3s 8d Kh Td Qd Qs Ac 5s Tc 7c Th 4c 5h 6c 9d Jd 2d Qc 4s Kc Jc Ad 9h",
    "🂡 ace": "Qc Th Tc Jh 4d Ac 5h 9s 3s Kh Js Ah 7c 9h 4c 5s 8c 5d 7s 5c Ad Jd Ks 9c 3c "
    "2d 2s 6c 6h Td 4s Qh 7h Qd Kc 6s Jc Qs 8h 3h 2c 4h 2h As 9d 8d 6d Ts Kd 8s 3d 7d",
}

# first cards only, for a few more seeds
FIRST = {7: "2s", 12345: "7s", "seed": "Jh", "0": "6s", "αβγ": "Qh"}


@pytest.mark.parametrize("seed", list(VECTORS), ids=lambda s: repr(s)[:24])
def test_shuffle_vectors(seed) -> None:
    assert " ".join(NAMES[c] for c in shuffle(seed)) == VECTORS[seed]


@pytest.mark.parametrize("seed", list(FIRST))
def test_first_card_vectors(seed) -> None:
    assert NAMES[shuffle(seed)[0]] == FIRST[seed]


def test_an_integer_seed_and_its_decimal_text_are_one_deal() -> None:
    assert shuffle(42) == shuffle("42")
    assert Deal.from_seed(42) == Deal.from_seed("42")
    assert Deal.from_seed(42).id == Deal.from_seed("42").id == "v1:42"
    assert shuffle(-7) == shuffle("-7")
    assert shuffle("042") != shuffle(42)  # text is taken as it is


def reference_shuffle(seed: int | str) -> list[str]:
    """deal.py's docstring, implemented again from the text alone."""
    data = (str(seed) if isinstance(seed, int) else seed).encode("utf-8")
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.sha256(
                b"klondike-race/deal/v1\x00" + data + b"\x00" + block.to_bytes(8, "big")
            ).digest()
            words.extend(int.from_bytes(digest[i : i + 8], "big") for i in (24, 16, 8, 0))
            block += 1
        return words.pop()

    deck = [r + s for s in "cdhs" for r in "A23456789TJQK"]
    for i in range(51, 0, -1):
        w = word()
        while w >= 2**64 - 2**64 % (i + 1):
            w = word()
        j = w % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


SEEDS = [*range(100), *(f"room-{i}-ü" for i in range(60)), *(10**k + 3 for k in range(40))]


def test_an_independent_implementation_agrees_for_200_seeds() -> None:
    assert len(SEEDS) == 200
    for seed in SEEDS:
        assert [NAMES[c] for c in shuffle(seed)] == reference_shuffle(seed), seed


def test_every_deal_holds_52_distinct_cards() -> None:
    for seed in SEEDS:
        deal = shuffle(seed)
        assert len(deal) == 52 and set(deal) == set(range(52))


def test_the_first_card_is_spread_over_the_deck() -> None:
    counts = [0] * 52
    for seed in range(2600):  # 50 per card on average
        counts[shuffle(seed)[0]] += 1
    assert min(counts) >= 20 and max(counts) <= 90


@pytest.mark.parametrize("seed", [True, None, 1.5, b"42", "", "x" * 201, ["42"]])
def test_bad_seeds(seed) -> None:
    with pytest.raises(NotationError) as err:
        Deal.from_seed(seed)
    assert err.value.reason == "bad_deal"


# ---- the layout --------------------------------------------------------------------------
def test_seed_42_lays_out_as_docs_deal_md_says() -> None:
    game = Game.from_seed(42)
    assert [NAMES[c] for c in game.columns[0]] == ["Qs"]
    assert [NAMES[c] for c in game.columns[1]] == ["Kd", "Js"] and game.down[1] == 1
    assert " ".join(NAMES[c] for c in game.columns[6]) == "3c Jc 5d 4h 4d Qc Th"
    assert game.down[6] == 6
    assert NAMES[game.stock[-1]] == "8c"


@pytest.mark.parametrize("seed", [0, 42, "layout"])
def test_layout_follows_the_readme_formula(seed) -> None:
    deal = Deal.from_seed(seed)
    cards = deal.cards
    columns = deal.columns()
    for c in range(1, 8):
        assert len(columns[c - 1]) == c
        for r in range(1, c + 1):
            assert columns[c - 1][r - 1] == cards[(r - 1) * (16 - r) // 2 + (c - r)]
    assert deal.stock()[::-1] == list(cards[28:])
    laid = [x for col in columns for x in col]
    assert sorted(laid + deal.stock()) == list(range(52))


# ---- explicit deals ----------------------------------------------------------------------
def test_explicit_deal_round_trips() -> None:
    names = VECTORS[42].split()
    deal = Deal.from_cards(names)
    assert deal.seed is None and deal.names() == names
    assert deal.cards == Deal.from_seed(42).cards
    assert deal.id == "cards:" + "".join(names)
    assert Deal.from_json(deal.to_json()) == deal
    assert deal.to_json() == {"cards": names}
    assert eval(repr(deal), {"Deal": Deal}) == deal
    seeded = Deal.from_seed("Klondike ♠")
    assert seeded.to_json() == {"seed": "Klondike ♠"}
    assert Deal.from_json(seeded.to_json()) == seeded
    assert eval(repr(seeded), {"Deal": Deal}) == seeded
    assert Deal.from_json({"seed": 42}) == Deal.from_seed("42")


@pytest.mark.parametrize(
    ("names", "reason"),
    [
        (VECTORS[0].split()[:51], "bad_deal"),
        ([*VECTORS[0].split(), "Ah"], "bad_deal"),
        ([*VECTORS[0].split()[:51], VECTORS[0].split()[0]], "bad_deal"),
        ([*VECTORS[0].split()[:51], "Zz"], "bad_card"),
        ([*VECTORS[0].split()[:51], "10h"], "bad_card"),
        (VECTORS[0].replace(" ", ""), "bad_deal"),
        (None, "bad_deal"),
    ],
)
def test_bad_explicit_deals(names, reason) -> None:
    with pytest.raises(NotationError) as err:
        Deal.from_cards(names)
    assert err.value.reason == reason


@pytest.mark.parametrize(
    "data", [None, [], {}, {"seed": 1, "cards": []}, {"cards": None}, {"seed": ""}, "42"]
)
def test_bad_deal_json(data) -> None:
    with pytest.raises(NotationError) as err:
        Deal.from_json(data)
    assert err.value.reason == "bad_deal"

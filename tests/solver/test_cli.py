"""``klondike-race solve`` through klondike_race.cli.main."""

from __future__ import annotations

import json

from klondike_race.cli import main
from klondike_race.engine import Deal, Game, Move, Settings

from .helpers import reference


def test_solve_seed_prints_result_line_time_and_states(capsys) -> None:
    code = main(["solve", "--seed", "100", "--draw", "3", "--budget", "60"])
    out = capsys.readouterr().out
    assert "result: " in out
    assert "time: " in out and "states: " in out
    if code == 0:
        line = out.split("moves): ", 1)[1].splitlines()[0].split()
        game = Game(Deal.from_seed(100), Settings(draw=3))
        for text in line:
            game.play(Move.parse(text))
        assert game.status == "won"
    else:
        assert code == 1
        assert "result: lose" in out


def test_solve_deal_file_json(tmp_path, capsys) -> None:
    ref = reference(0, 3)
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(ref["cards"]))
    code = main(["solve", "--deal", str(path), "--draw", "3", "--json", "--budget", "60"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["result"] == "win"
    assert data["settings"]["draw"] == 3
    game = Game(Deal.from_cards(ref["cards"]), Settings(draw=3))
    for text in data["line"]:
        game.play(Move.parse(text))
    assert game.status == "won"
    assert data["states"] > 0 and data["seconds"] >= 0


def test_solve_lose_and_unknown_exit_codes(tmp_path, capsys) -> None:
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(reference(104, 1)["cards"]))
    assert main(["solve", "--deal", str(path), "--json", "--budget", "120"]) == 1
    assert json.loads(capsys.readouterr().out)["result"] == "lose"
    assert main(["solve", "--deal", str(path), "--json", "--states", "100"]) == 3
    assert json.loads(capsys.readouterr().out)["result"] == "unknown"


def test_solve_with_settings_and_moves(capsys) -> None:
    code = main(["solve", "--seed", "5", "--passes", "1", "--empty", "any",
                 "--foundation-to-column", "forbidden", "--moves", "d d", "--json"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["passes"] == 1
    assert data["settings"]["empty"] == "any"
    assert data["settings"]["foundation_to_column"] is False
    assert code == {"win": 0, "lose": 1, "unknown": 3}[data["result"]]
    if data["result"] == "win":
        game = Game(Deal.from_seed(5), Settings(passes=1, empty="any", foundation_to_column=False))
        for text in ["d", "d", *data["line"]]:
            game.play(Move.parse(text))
        assert game.status == "won"


def test_bad_deal_file(tmp_path, capsys) -> None:
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(["Ah"] * 52))
    assert main(["solve", "--deal", str(path)]) == 2
    assert "bad_deal" in capsys.readouterr().err
    assert main(["solve", "--deal", str(tmp_path / "missing.json")]) == 2

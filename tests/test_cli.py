"""The ``klondike-race`` command: ``deal`` and ``verify`` (in-process and as a real process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from klondike_race.cli import main
from tests.conftest import ROOT, reference_deals, step_to_move
from tests.engine.test_deal import VECTORS

SCRIPT = Path(sys.executable).parent / "klondike-race"
NAMES = {r + s for r in "A23456789TJQK" for s in "cdhs"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def record_of(ref: dict, moves: list[str] | None = None) -> dict:
    """A reference winning line as a game record, with the explicit-cards deal form."""
    return {
        "format": "klondike-race/record/1",
        "deal": {"cards": ref["cards"]},
        "settings": {"draw": ref["draw"]},
        "moves": moves if moves is not None else [str(step_to_move(s)) for s in ref["line"]],
    }


def write(tmp_path: Path, data: object, name: str = "record.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


# ---- deal --------------------------------------------------------------------------------
def test_deal_text(capsys) -> None:
    code, out, _ = run(capsys, "deal", "--seed", "42")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("deal v1:42") and "draw=1" in lines[0]
    cols = [line for line in lines if line.startswith("col")]
    assert [c.split(":")[0] for c in cols] == [f"col{i}" for i in range(1, 8)]
    # docs/deal.md: seed 42's column 7 and the first stock card
    assert cols[6] == "col7: [3c][Jc][5d][4h][4d][Qc] Th "
    assert cols[0] == "col1:  Qs "
    assert sum(c.count("[") for c in cols) == 21
    stock = next(line for line in lines if line.startswith("stock"))
    assert stock.split(": ")[1].split() == VECTORS[42].split()[28:]


@pytest.mark.parametrize("seed", ["42", "Klondike ♠"])
def test_deal_json_names_all_52_cards(capsys, seed) -> None:
    code, out, _ = run(capsys, "deal", "--seed", seed, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["seed"] == seed and data["deal"] == f"v1:{seed}"
    assert data["order"] == VECTORS[42 if seed == "42" else seed].split()
    cards = data["cards"]
    assert len(cards) == 52 and {c["card"] for c in cards} == NAMES
    piles: dict[str, list[dict]] = {}
    for c in cards:
        assert set(c) == {"card", "pile", "position", "face_up"}
        piles.setdefault(c["pile"], []).append(c)
    assert sorted(piles) == sorted([f"col{i}" for i in range(1, 8)] + ["stock"])
    for i in range(1, 8):
        column = piles[f"col{i}"]
        assert [c["position"] for c in column] == list(range(i))
        assert [c["face_up"] for c in column] == [False] * (i - 1) + [True]
    stock = piles["stock"]
    assert [c["position"] for c in stock] == list(range(24))
    assert not any(c["face_up"] for c in stock)
    assert [c["card"] for c in stock] == data["order"][28:]
    assert sum(not c["face_up"] for c in cards) == 21 + 24


def test_deal_settings_flags(capsys) -> None:
    code, out, _ = run(capsys, "deal", "--seed", "7", "--draw", "3", "--scoring", "vegas", "--json")
    assert code == 0
    settings = json.loads(out)["settings"]
    assert settings["draw"] == 3 and settings["scoring"] == "vegas" and settings["passes"] == 3


def test_deal_refuses_a_bad_seed(capsys) -> None:
    code, _, err = run(capsys, "deal", "--seed", "x" * 201)
    assert code == 2 and "bad_deal" in err


# ---- verify ------------------------------------------------------------------------------
WINS = [d for d in reference_deals() if d["result"] == "win"]


@pytest.mark.parametrize("ref", [WINS[0], WINS[-1]], ids=lambda d: f"{d['id']}-draw{d['draw']}")
def test_verify_a_winning_line(capsys, tmp_path, ref) -> None:
    code, out, _ = run(capsys, "verify", write(tmp_path, record_of(ref)))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == ref["steps"] + 1
    final = lines[-1]
    assert final.startswith("final: ")
    summary = json.loads(final.removeprefix("final: "))
    assert summary["status"] == "won" and summary["foundation"] == 52
    assert summary["moves"] == ref["steps"]


def test_the_record_docs_notation_shows_is_legal(capsys, tmp_path) -> None:
    """docs/notation.md's example record replays move by move on its own seed."""
    text = (ROOT / "docs" / "notation.md").read_text()
    block = text.split("## Game records", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    record = json.loads(block)
    code, out, _ = run(capsys, "verify", write(tmp_path, record))
    assert code == 0, out
    final = json.loads(out.splitlines()[-1].removeprefix("final: "))
    assert final["moves"] == len(record["moves"]) and final["status"] == "resigned"


def test_verify_names_the_illegal_move(capsys, tmp_path) -> None:
    ref = WINS[0]
    moves = [str(step_to_move(s)) for s in ref["line"]]
    assert moves[:3] == ["d", "d", "d"]
    bad = [*moves[:3], "w>h", *moves[3:]]  # 9s is on the waste (tests/data/README.md)
    code, out, _ = run(capsys, "verify", write(tmp_path, record_of(ref, bad)))
    assert code == 1
    last = out.splitlines()[-1]
    assert last.startswith("ILLEGAL move 4 (w>h): ")
    assert "illegal_target" in last and "9s" in last
    code, out, _ = run(capsys, "verify", write(tmp_path, record_of(ref, ["d", "r"])))
    assert code == 1
    assert "move 2 (r)" in out and "stock_not_empty" in out


def test_verify_refuses_what_is_not_a_record(capsys, tmp_path) -> None:
    code, _, err = run(capsys, "verify", write(tmp_path, "{not json"))
    assert code == 2 and "cannot read" in err
    code, _, err = run(capsys, "verify", write(tmp_path, {"format": "x"}))
    assert code == 2 and "bad_record" in err
    code, _, err = run(capsys, "verify", str(tmp_path / "missing.json"))
    assert code == 2


def test_the_installed_command(tmp_path) -> None:
    assert SCRIPT.exists()
    done = subprocess.run(
        [str(SCRIPT), "deal", "--seed", "42", "--json"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert len(json.loads(done.stdout)["cards"]) == 52
    path = write(tmp_path, record_of(WINS[1]))
    done = subprocess.run(
        [str(SCRIPT), "verify", path], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert json.loads(done.stdout.splitlines()[-1].removeprefix("final: "))["status"] == "won"
    bad = write(tmp_path, record_of(WINS[1], ["d", "u"]), "bad.json")
    done = subprocess.run([str(SCRIPT), "verify", bad], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "move 2 (u)" in done.stdout and "undo_disabled" in done.stdout
    # a reader that stops reading (`| head`) is no error to report: here it has gone
    # before the command writes (it starts in about a tenth of a second)
    deal = subprocess.Popen(
        [str(SCRIPT), "deal", "--seed", "42", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert deal.stdout is not None
    deal.stdout.close()
    _, err = deal.communicate(timeout=30)
    assert "Traceback" not in err and "BrokenPipe" not in err, err

"""bench/loo_draws.py on hand-made kept runs (ctest tools.loo_draws; no cluster, no rlsched run).

Every expected figure below is worked out by hand from the ratios written here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import loo_draws  # noqa: E402
import policy_protocol as pp  # noqa: E402


def write_draw(folder: Path, seed: int, model_ratios: dict[str, tuple[float, float]]) -> str:
    """A kept leave-one-out run: SJF the best heuristic at 10 / 100 s on every site, the model at the given
    multiples of that, and a protocol.log whose first train line has --seed."""
    folder.mkdir()
    (folder / "protocol.log").write_text(
        f"$ rlsched train --config x.yaml --output {folder}/loo-without-a.pt --seed {seed} --hidden 16 16\n"
        "epoch 10/160 ...\n")
    for site, (bsld, p99) in model_ratios.items():
        results = [{"policy": h, "avg_bsld": 10.0 if h == "sjf" else 40.0, "p99_wait": 100.0 if h == "sjf" else 400.0}
                   for h in pp.HEURISTICS]
        results.append({"policy": "model:m.pt", "avg_bsld": 10.0 * bsld, "p99_wait": 100.0 * p99})
        (folder / f"loo-{site}-easy.json").write_text(json.dumps({"results": results}))
    return str(folder)


@pytest.fixture
def two_draws(tmp_path):
    # Seed 1: Lublin 0.5 / 0.5 (won); the CPU family's sites 2 / 1 and 0.5 / 1, so the fold is 1.0 / 1.0 (lost).
    a = write_draw(tmp_path / "a", 1, {"lublin": (0.5, 0.5), "gen-cpu-11": (2.0, 1.0), "gen-cpu-13": (0.5, 1.0)})
    # Seed 2: Lublin 2 / 0.5 (lost); the family's sites 0.5 / 0.25 and 0.5 / 1, so the fold is 0.5 / 0.5 (won).
    b = write_draw(tmp_path / "b", 2, {"lublin": (2.0, 0.5), "gen-cpu-11": (0.5, 0.25), "gen-cpu-13": (0.5, 1.0)})
    return a, b


def row(text: str, first_cell: str) -> list[str]:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row '{first_cell}' in:\n{text}")


def test_each_fold_over_the_draws_and_the_recipe_line(two_draws, capsys):
    loo_draws.main([f"R={two_draws[0]},{two_draws[1]}"])
    out = capsys.readouterr().out
    # Lublin: 0.5 then 2.0 -> sqrt(1) = 1.0, p99 0.5: not below 1, so not won over the draws.
    assert row(out, "lublin") == ["lublin", "**0.500 / 0.500**", "2.000 / 0.500", "1.000 / 0.500"]
    # The family: 1.0 / 1.0 then 0.5 / 0.5 -> sqrt(0.5) = 0.707 for both: won.
    assert row(out, "gen-cpu") == ["gen-cpu", "1.000 / 1.000", "**0.500 / 0.500**", "**0.707 / 0.707**"]
    # Every fold of every draw: 0.5 * 1.0 * 2.0 * 0.5 = 0.5, its fourth root 0.8409; 1 fold of 2 won over the
    # draws; seed 1: sqrt(0.5 * 1) = 0.7071 with Lublin won; seed 2: sqrt(2 * 0.5) = 1 with the family won.
    assert row(out, "R") == ["R", "2", "0.8409 over 4", "1 of 2", "",
                             "seed 1: 0.7071, 1; seed 2: 1.0000, 1"]


def test_a_second_recipe_is_set_beside_the_first_on_the_seeds_both_drew(two_draws, tmp_path, capsys):
    other = write_draw(tmp_path / "c", 2, {"lublin": (0.25, 0.5), "gen-cpu-11": (0.5, 0.5), "gen-cpu-13": (0.5, 0.5)})
    lone = write_draw(tmp_path / "d", 7, {"lublin": (1.0, 1.0), "gen-cpu-11": (1.0, 1.0), "gen-cpu-13": (1.0, 1.0)})
    loo_draws.main([f"first={two_draws[0]},{two_draws[1]}", f"second={other}", f"third={lone}"])
    out = capsys.readouterr().out
    # second: 0.25 and 0.5 -> sqrt(0.125) = 0.3536, both won; the first recipe at seed 2 alone: 1.0, 1 won.
    assert row(out, "second") == ["second", "1", "0.3536 over 2", "2 of 2", "1.0000 over 2, 1 won (seeds 2)",
                                  "seed 2: 0.3536, 2"]
    assert row(out, "third")[4] == "no seed in common"


def test_draws_judged_on_other_sites_are_refused(two_draws, tmp_path):
    other = write_draw(tmp_path / "c", 3, {"lublin": (1.0, 1.0), "gen-cpu-12": (1.0, 1.0), "gen-cpu-13": (1.0, 1.0)})
    with pytest.raises(SystemExit) as e:
        loo_draws.main([f"R={two_draws[0]},{other}"])
    assert str(e.value).startswith(f"loo_draws: {other} was judged on other sites than {two_draws[0]}")


def test_a_folder_that_is_not_a_kept_run_is_named(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit) as e:
        loo_draws.main([f"R={empty}"])
    assert str(e.value) == f"loo_draws: {empty}: no loo-*-easy.json (not a --keep folder of --protocol loo with " \
                           "--backfill easy)"


def test_a_damaged_result_names_its_file(two_draws):
    damaged = Path(two_draws[1]) / "loo-lublin-easy.json"
    damaged.write_text('{"results": [')
    with pytest.raises(SystemExit) as e:
        loo_draws.main([f"R={two_draws[0]},{two_draws[1]}"])
    assert str(e.value).startswith(f"loo_draws: {damaged}: not a leave-one-out result")


def test_a_log_without_the_seed_is_refused(two_draws):
    log = Path(two_draws[0]) / "protocol.log"
    log.write_text("$ rlsched train --config x.yaml --output m.pt\n")
    with pytest.raises(SystemExit) as e:
        loo_draws.main([f"R={two_draws[0]}"])
    assert str(e.value) == f"loo_draws: {log}: its first `rlsched train` line has no --seed"


def test_an_argument_without_a_recipe_name_is_refused(two_draws):
    with pytest.raises(SystemExit) as e:
        loo_draws.main([two_draws[0]])
    assert str(e.value) == f"loo_draws: '{two_draws[0]}': expected RECIPE=DIR[,DIR...]"

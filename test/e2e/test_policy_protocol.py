"""bench/policy_protocol.py's site seeds and its side-by-side table of models, on hand-made results (ctest
tools.policy_protocol; no cluster, no rlsched run).

Every expected value below is worked out by hand from the results written here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import policy_protocol as pp  # noqa: E402


def test_one_site_per_family_keeps_the_names_and_seeds_of_before():
    assert pp.judged_sites(["lublin", "gen-cpu", "gen-gpu"], 1001, 1) == [
        ("lublin", None), ("gen-cpu", 1002), ("gen-gpu", 1003)]


def test_several_sites_per_family_never_share_a_seed():
    sites = pp.judged_sites(["lublin", "gen-cpu", "gen-gpu"], 9101, 3)
    assert sites == [("lublin", None),
                     ("gen-cpu-9102", 9102), ("gen-cpu-9105", 9105), ("gen-cpu-9108", 9108),
                     ("gen-gpu-9103", 9103), ("gen-gpu-9106", 9106), ("gen-gpu-9109", 9109)]
    # The stop-41 command: gen-cpu on the odd seeds 9101-9109, gen-gpu on the even ones 9102-9110.
    two = pp.judged_sites(["gen-cpu", "gen-gpu"], 9101, 5)
    assert [s for n, s in two if n.startswith("gen-cpu")] == [9101, 9103, 9105, 9107, 9109]
    assert [s for n, s in two if n.startswith("gen-gpu")] == [9102, 9104, 9106, 9108, 9110]


def result(policy, bsld, p99):
    return {"policy": policy, "avg_bsld": bsld, "p99_wait": p99}


def heuristics(best_bsld, best_p99):
    """Every heuristic, SJF the best at (best_bsld, best_p99), the others twice as bad."""
    return [result(h, best_bsld if h == "sjf" else 2 * best_bsld, best_p99 if h == "sjf" else 2 * best_p99)
            for h in pp.HEURISTICS]


def test_models_side_by_side_give_ratios_means_wins_and_worst_over_the_sites_out_of_sample():
    labels = {"model:a.pt": "default", "model:b.pt": "b.pt"}
    compared = [
        # a: 0.5 / 0.5 (a win); b: 2 / 1 (slowdown lost)
        ("gen-cpu-1", True, heuristics(10, 100) + [result("model:a.pt", 5, 50), result("model:b.pt", 20, 100)]),
        # a: 2 / 2; b: 0.5 / 1 (a win: p99 equal counts)
        ("gen-gpu-2", True, heuristics(4, 1000) + [result("model:a.pt", 8, 2000), result("model:b.pt", 2, 1000)]),
        # in sample: shown, but left out of the means (a: 0.1 / 0.1 would otherwise move them)
        ("lublin", False, heuristics(1, 10) + [result("model:a.pt", 0.1, 1), result("model:b.pt", 1, 10)]),
    ]
    lines = pp.models_report(compared, labels)
    text = "\n".join(lines)
    assert "| gen-cpu-1 | sjf 10.00 | **0.50 / 0.50** | 2.00 / 1.00 |" in text
    assert "| gen-gpu-2 | sjf 4.00 | 2.00 / 2.00 | **0.50 / 1.00** |" in text
    assert "| lublin (in sample) | sjf 1.00 | **0.10 / 0.10** | 1.00 / 1.00 |" in text
    assert "Over the 2 workloads out of sample" in text
    # a: sqrt(0.5 * 2) = 1 on both; one win; worst 2. b: sqrt(2 * 0.5) = 1, sqrt(1 * 1) = 1; one win; worst 2.
    assert "| default | 1.00 / 1.00 | 1 of 2 | 2.00 |" in text
    assert "| b.pt | 1.00 / 1.00 | 1 of 2 | 2.00 |" in text


def test_a_tie_with_the_best_heuristic_is_not_a_win():
    labels = {"model:a.pt": "a"}
    compared = [("gen-cpu-1", True, heuristics(10, 100) + [result("model:a.pt", 10, 100)])]
    text = "\n".join(pp.models_report(compared, labels))
    assert "| gen-cpu-1 | sjf 10.00 | 1.00 / 1.00 |" in text
    assert "| a | 1.00 / 1.00 | 0 of 1 | 1.00 |" in text


def test_training_seeds_read_as_seeds_and_ranges():
    assert pp.seed_list(pp.GENERATED_TRAINING_SEEDS) == [1, 2, 3, 4]
    assert pp.seed_list("1-4,9,5-6") == [1, 2, 3, 4, 5, 6, 9]
    assert pp.seed_list("3,3") == [3]
    for bad in ("", "4-1", "a", "1-", "-2"):
        with pytest.raises(ValueError):
            pp.seed_list(bad)


def test_the_shipped_default_is_never_judged_on_a_generated_site_it_trained_on():
    four = pp.seed_list("1-4")
    # Judging the shipped default: its own training seeds (1-12) are out, with those loo trains on.
    assert pp.seeds_trained_on(["shipped"], four) == set(range(1, 13))
    assert pp.seeds_trained_on(["loo", "shipped"], [20]) == set(range(1, 13)) | {20}
    # A default trained in the same run replaces the shipped one: only its own seeds count.
    assert pp.seeds_trained_on(["default", "shipped"], four) == {1, 2, 3, 4}
    assert pp.seeds_trained_on(["loo"], four) == {1, 2, 3, 4}


def test_a_missing_config_is_refused_before_anything_runs(tmp_path):
    keep = tmp_path / "kept"
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "shipped", "--config",
                          str(tmp_path / "no-such.yaml"), "--keep", str(keep)], capture_output=True, text=True)
    assert run.returncode != 0
    assert f"--config: no such file '{tmp_path / 'no-such.yaml'}'" in run.stderr
    assert not keep.exists()  # refused before a folder, a site or a run


def test_leave_one_out_judges_a_generated_family_as_one_fold_over_its_sites():
    names = [n for n, _ in pp.judged_sites(["lublin", "gavel", "gen-cpu", "gen-gpu"], 9787, 2)]
    assert pp.loo_folds(names) == [("lublin", ["lublin"]), ("gavel", ["gavel"]),
                                   ("gen-cpu", ["gen-cpu-9789", "gen-cpu-9793"]),
                                   ("gen-gpu", ["gen-gpu-9790", "gen-gpu-9794"])]
    # One site per family: the fold keeps the family's name, as the reports of before did.
    assert pp.loo_folds(["ricc", "gen-cpu", "gen-gpu"]) == [("ricc", ["ricc"]), ("gen-cpu", ["gen-cpu"]),
                                                            ("gen-gpu", ["gen-gpu"])]


def test_a_generated_family_left_out_is_not_trained_on_at_all():
    pool = ["lublin", "gavel", "gen-cpu-9789", "gen-gpu-9790", "train-cpu-1", "train-cpu-2", "train-gpu-1"]
    # Neither its judged sites nor its training seeds: the "generated families not used in training".
    assert pp.fold_sources(pool, "gen-cpu") == ["lublin", "gavel", "gen-gpu-9790", "train-gpu-1"]
    assert pp.fold_sources(pool, "gen-gpu") == ["lublin", "gavel", "gen-cpu-9789", "train-cpu-1", "train-cpu-2"]
    # A shared trace left out: every generated site stays in training, the other family's judged ones included.
    assert pp.fold_sources(pool, "lublin") == ["gavel", "gen-cpu-9789", "gen-gpu-9790", "train-cpu-1",
                                               "train-cpu-2", "train-gpu-1"]
    # A family is told by its prefix and name, not by a substring: "gen-cpus" would be another family.
    assert pp.family_of("train-cpu-12") == "gen-cpu"
    assert pp.family_of("gen-cpus-3") == "gen-cpus"
    assert pp.family_of("gen-gpu") == "gen-gpu"
    assert pp.family_of("coare") is None


def test_a_family_line_gives_geometric_means_wins_and_the_worst_site():
    # Sites: 0.5 / 0.5 (won), 2 / 2, 1 / 0.5 (a tie on slowdown is no win). Geometric means: 1 and 0.79.
    line = pp.family_line("gen-cpu", "easy", [(0.5, 0.5), (2, 2), (1, 0.5)])
    assert line == ("**gen-cpu left out, easy backfill, over its 3 sites**: geometric mean 1.00 / 0.79, "
                    "1 of 3 won, worst 2.00")


def test_the_folds_line_counts_a_family_by_its_geometric_means():
    # lublin 0.67 / 0.42 won; ricc 1.26 / 1.09 lost; gen-cpu's sites' means 0.90 / 0.79 won; gen-gpu 0.97 / 1.004
    # lost (p99 above). Geometric means over the 4 folds: (0.67 * 1.26 * 0.9 * 0.97) ** 0.25 = 0.927,
    # (0.42 * 1.09 * 0.79 * 1.004) ** 0.25 = 0.776.
    line = pp.folds_line("easy", [("lublin", 0.67, 0.42), ("ricc", 1.26, 1.09), ("gen-cpu", 0.9, 0.79),
                                  ("gen-gpu", 0.97, 1.004)])
    assert line.startswith("**Leave one out, easy backfill: 2 of 4 folds won**, geometric mean 0.93 / 0.78 ")


CARD = """# rlsched policy `default/policy.pt`

## Data

trained on X

## Out of sample: leave one out (the same recipe, trained without the workload)

old figures

## Training

PPO
"""


def test_a_card_section_shows_its_protocols_rows_and_a_rerun_replaces_it():
    rows = [("loo", "lublin", "easy", 0.67, 0.42, "f1"), ("time-split", "coare", "easy", 0.98, 1.2, "sjf"),
            ("loo", "ricc", "easy", 1.26, 1.09, "unicep"), ("loo", "coare", "easy", 0.9, 1.01, "sjf")]
    section = pp.card_section("loo", "python3 bench/policy_protocol.py --protocol loo", "2026-12-05 12:00 UTC",
                              rows, ["- a family line"])
    assert section[0] == pp.CARD_SECTIONS["loo"]
    # Only leave one out's rows; COARE's p99 1.01 is above its heuristic's, so no win.
    assert [line for line in section if line.startswith("| ") and not line.startswith("| workload")] == [
        "| lublin | easy | f1 | 0.67 | 0.42 | yes |", "| ricc | easy | unicep | 1.26 | 1.09 | no |",
        "| coare | easy | sjf | 0.90 | 1.01 | no |"]
    assert section[-1] == "- a family line"
    assert "`python3 bench/policy_protocol.py --protocol loo`" in section[2]

    card = pp.put_section(CARD, section)
    # Replaced in place: the old figures are gone, the sections around it kept, in their order.
    assert "old figures" not in card and card.count(pp.CARD_SECTIONS["loo"]) == 1
    assert card.index("## Data") < card.index(pp.CARD_SECTIONS["loo"]) < card.index("## Training")
    assert "trained on X" in card and card.endswith("## Training\n\nPPO\n")
    assert "| coare | easy | sjf | 0.90 | 1.01 | no |\n\n- a family line\n\n## Training" in card
    # A rerun gives the same card; a protocol the card lacks is appended at its end.
    assert pp.put_section(card, section) == card
    split = pp.card_section("time-split", "cmd", "then", rows)
    with_split = pp.put_section(card, split)
    assert with_split.startswith(card.rstrip("\n")) and with_split.endswith("| coare | easy | sjf | 0.98 | 1.20 | no |\n")


def test_a_missing_card_is_refused_before_any_run(tmp_path):
    missing = tmp_path / "nowhere.md"
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--card", str(missing)],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert f"--card: no such model card '{missing}'" in run.stderr


def test_a_card_without_a_protocol_it_shows_is_refused_before_any_run(tmp_path):
    card = tmp_path / "policy.md"
    card.write_text(CARD)
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "shipped", "--card", str(card)],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "--card: --protocol shipped writes no section of a model card (only loo and time-split do)" in run.stderr
    assert card.read_text() == CARD


def test_a_shared_traces_fold_means_are_its_own_ratios():
    assert pp.fold_means([(0.67, 0.42)]) == pytest.approx((0.67, 0.42))
    # Two sites: geometric means (0.5 * 2) ** 0.5 = 1 and (0.25 * 1) ** 0.5 = 0.5.
    assert pp.fold_means([(0.5, 0.25), (2, 1)]) == pytest.approx((1.0, 0.5))


def test_shared_traces_count_shared_weight_times_and_train_passes_one_weight_per_trace(monkeypatch):
    args = types.SimpleNamespace(shared_weight=3, weight={}, rlsched="rlsched", config="rlsched.yaml", threads=0,
                                 train_minutes=8, seed=1, train_arg=[])
    names = ["lublin", "train-cpu-1", "gen-gpu-9792", "gavel"]
    assert pp.pool_weights(args, names) == [3, 1, 1, 3]
    commands = []
    monkeypatch.setattr(pp, "run", lambda cmd, log: commands.append(cmd) or 0.0)
    sources = [{"trace": n} for n in names]
    pp.train(args, "m", sources, "/tmp", None, weights=pp.pool_weights(args, names))
    pp.train(args, "m", sources, "/tmp", None, weights=[1, 1, 1, 1])
    weighted, plain = commands
    assert [weighted[i + 1] for i, a in enumerate(weighted) if a == "--trace-weight"] == ["3", "1", "1", "3"]
    assert "--trace-weight" not in plain  # all ones: the command of before


def test_a_workloads_weight_counts_over_shared_weight_and_a_familys_counts_for_each_of_its_sites():
    args = types.SimpleNamespace(shared_weight=3,
                                 weight=pp.parse_weights(["gen-gpu=2", "coare=1"], ["coare", "gavel", "gen-gpu"]))
    names = ["coare", "gavel", "train-gpu-1", "train-gpu-7", "train-cpu-1", "gen-gpu-9792"]
    assert pp.pool_weights(args, names) == [1, 3, 2, 2, 1, 2]


@pytest.mark.parametrize("text, why", [
    ("gen-gpu", "expected WORKLOAD=N"), ("gen-gpu=two", "expected WORKLOAD=N"), ("gen-gpu=-1", "expected WORKLOAD=N"),
    ("gen-gpu=0", "counts at least once"), ("ricc=2", "ricc is not one of --workloads (coare,gen-gpu)")])
def test_a_weight_that_names_no_workload_or_no_count_is_refused_saying_which(text, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        pp.parse_weights([text], ["coare", "gen-gpu"])


def test_a_bad_weight_is_refused_before_anything_runs(tmp_path):
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "default", "--workloads",
                          "coare,gen-gpu", "--weight", "gen-cpu=2", "--rlsched", str(tmp_path / "missing")],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "--weight 'gen-cpu=2': gen-cpu is not one of --workloads (coare,gen-gpu)" in run.stderr


def test_the_report_names_the_blas_kernels_openblas_says_it_runs(tmp_path):
    # OpenBLAS says its kernels on stderr when OPENBLAS_VERBOSE=2: a stand-in rlsched that does the same.
    fake = tmp_path / "rlsched"
    fake.write_text('#!/bin/sh\necho "rlsched 0.1.0"\n[ "$OPENBLAS_VERBOSE" = 2 ] && echo "Core: Zen" >&2\nexit 0\n')
    fake.chmod(0o755)
    assert pp.blas_kernels(str(fake)) == "OpenBLAS Zen kernels"
    quiet = tmp_path / "quiet"
    quiet.write_text('#!/bin/sh\necho "rlsched 0.1.0"\n')
    quiet.chmod(0o755)
    assert pp.blas_kernels(str(quiet)) == "BLAS kernels unknown (not OpenBLAS)"
    assert pp.blas_kernels(str(tmp_path / "missing")) == "BLAS kernels unknown (no rlsched to ask)"


def test_a_run_at_another_load_is_judged_in_its_workloads_fold():
    assert pp.at_load("coare", 1) == "coare"
    assert pp.at_load("coare", 0.97) == "coare@x0.97"
    assert pp.at_load("gen-cpu-9791", 1.015) == "gen-cpu-9791@x1.015"
    names = ["lublin", "lublin@x0.97", "gen-cpu-11", "gen-cpu-11@x1.03", "gen-cpu-13@x1.03"]
    assert pp.loo_folds(names) == [("lublin", ["lublin", "lublin@x0.97"]),
                                   ("gen-cpu", ["gen-cpu-11", "gen-cpu-11@x1.03", "gen-cpu-13@x1.03"])]


@pytest.mark.parametrize("text, why", [("1,x", "'x' is not a number"), ("0.97,0", "'0' is not a positive number"),
                                       ("1,1.0", "'1.0' is listed twice"), ("inf", "'inf' is not a positive number")])
def test_load_factors_that_are_not_distinct_positive_numbers_are_refused_saying_which(text, why, tmp_path):
    with pytest.raises(ValueError, match=re.escape(why)):
        pp.load_factor_list(text)
    keep = tmp_path / "kept"
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--load-factors", text,
                          "--rlsched", str(tmp_path / "missing"), "--keep", str(keep)], capture_output=True, text=True)
    assert run.returncode != 0
    assert f"--load-factors {why}" in run.stderr
    assert not keep.exists()


FAKE_RLSCHED = """#!/usr/bin/env python3
# Stands in for rlsched: logs its arguments; evaluate writes SJF the best heuristic at 10 / 100 s and the model at
# half of that at the workload's own load, at 2 / 1 times it at any other.
import json, sys
argv = sys.argv[1:]
with open(sys.argv[0] + ".calls", "a") as f:
    f.write(json.dumps(argv) + "\\n")
if argv[:1] == ["evaluate"]:
    value = lambda flag, default: argv[argv.index(flag) + 1] if flag in argv else default
    own = value("--load-factor", "1") == "1"
    results = [{"policy": p, "avg_bsld": 10.0 if p == "sjf" else 40.0, "p99_wait": 100.0 if p == "sjf" else 400.0,
                "avg_wait": 1.0, "max_wait": 1.0, "utilization": 0.5} for p in value("--policies", "").split(",")]
    model = results[-1]
    model["avg_bsld"], model["p99_wait"] = (5.0, 50.0) if own else (20.0, 100.0)
    with open(value("--json", None), "w") as f:
        json.dump({"results": results}, f)
"""


def kept_run(folder: Path, folds: list[str]) -> None:
    """A --keep folder of an earlier leave-one-out run: its fold models and the log of the train that made them."""
    folder.mkdir()
    for fold in folds:
        (folder / f"loo-without-{fold}.pt").write_bytes(b"model")
    (folder / "protocol.log").write_text(f"$ rlsched train --config x.yaml --output {folder}/loo-without-lublin.pt "
                                         "--seed 7 --hidden 16 16\nepoch 10/160\n")


def test_kept_fold_models_are_judged_at_every_load_without_training(tmp_path):
    fake = tmp_path / "rlsched"
    fake.write_text(FAKE_RLSCHED)
    fake.chmod(0o755)
    kept, keep, out = tmp_path / "earlier", tmp_path / "again", tmp_path / "report.md"
    kept_run(kept, ["lublin", "coare"])
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--workloads", "lublin,coare",
                          "--backfill", "easy", "--load-factors", "0.97,1", "--fold-models", str(kept), "--seed", "7",
                          "--train-arg=--hidden", "--train-arg=16", "--train-arg=16", "--rlsched", str(fake), "--keep",
                          str(keep), "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    calls = [json.loads(line) for line in (tmp_path / "rlsched.calls").read_text().splitlines()]
    assert not [c for c in calls if c[:1] == ["train"]]
    evaluates = [c for c in calls if c[:1] == ["evaluate"]]
    judged = [(c[c.index("--policies") + 1].split(",")[-1], c[c.index("--load-factor") + 1] if "--load-factor" in c
               else None) for c in evaluates]
    assert judged == [(f"model:{kept}/loo-without-lublin.pt", "0.97"), (f"model:{kept}/loo-without-lublin.pt", None),
                      (f"model:{kept}/loo-without-coare.pt", "0.97"), (f"model:{kept}/loo-without-coare.pt", None)]
    report = out.read_text()
    # Each fold: 0.5 / 0.5 at its own load, 2 / 1 at 0.97: geometric means 1.00 and 0.71, one run won, none of the
    # folds (a slowdown ratio of 1 is no win).
    assert ("**lublin left out, easy backfill, over its 1 site at 2 loads**: geometric mean 1.00 / 0.71, 1 of 2 won, "
            "worst 2.00") in report
    assert "**Leave one out, easy backfill: 0 of 2 folds won**, geometric mean 1.00 / 0.71" in report
    assert "--load-factors 0.97,1 --fold-models" in report
    # bench/loo_draws.py reads the judged-again folder as a draw of the kept run's seed.
    import loo_draws
    assert loo_draws.draw_seed(str(keep)) == 7
    assert sorted(loo_draws.site_ratios(str(keep), "easy")) == ["coare", "coare@x0.97", "lublin", "lublin@x0.97"]


def test_fold_models_a_kept_run_lacks_are_named_before_anything_runs(tmp_path):
    kept, keep = tmp_path / "earlier", tmp_path / "again"
    kept_run(kept, ["lublin"])
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--workloads", "lublin,coare",
                          "--fold-models", str(kept), "--rlsched", str(tmp_path / "missing"), "--keep", str(keep)],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert f"--fold-models {kept}: no {kept}/loo-without-coare.pt" in run.stderr
    assert not keep.exists()
    both = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo,time-split", "--workloads",
                           "lublin", "--fold-models", str(kept), "--rlsched", str(tmp_path / "missing")],
                          capture_output=True, text=True)
    assert both.returncode != 0
    assert "--fold-models judges kept leave-one-out models: --protocol loo alone" in both.stderr
    kept_run(tmp_path / "both", ["lublin"])
    other_seed = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--workloads", "lublin",
                                 "--fold-models", str(tmp_path / "both"), "--seed", "8", "--rlsched",
                                 str(tmp_path / "missing")], capture_output=True, text=True)
    assert other_seed.returncode != 0
    assert "its models were not trained with `--seed 8`" in other_seed.stderr
    other_recipe = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--workloads", "lublin",
                                   "--fold-models", str(tmp_path / "both"), "--seed", "7", "--train-arg=--hidden",
                                   "--train-arg=32", "--rlsched", str(tmp_path / "missing")],
                                  capture_output=True, text=True)
    assert other_recipe.returncode != 0
    assert "its models were not trained with `--seed 7 --hidden 32`" in other_recipe.stderr


def test_a_card_gives_a_workload_judged_at_several_loads_one_row_decided_over_the_loads():
    rows = [("loo", "coare@x0.97", "easy", 0.5, 0.5, "sjf"), ("loo", "coare", "easy", 0.9, 0.9, "sjf"),
            ("loo", "coare@x1.03", "easy", 2.5, 1.0, "unicep"),
            ("loo", "gen-cpu-11", "easy", 0.8, 0.5, "f1"), ("loo", "gen-cpu-11@x1.03", "easy", 0.8, 2.0, "f1"),
            ("time-split", "coare", "easy", 0.9, 0.9, "sjf")]
    section = pp.card_section("loo", "cmd", "now", rows)
    body = [line for line in section if line.startswith("| ") and not line.startswith("| workload")]
    # COARE: won at its own load (0.90 / 0.90), and over the three (0.5 * 0.9 * 2.5) ** (1/3) = 1.04 and
    # (0.5 * 0.9 * 1) ** (1/3) = 0.77: two runs won, the fold lost. The site: 0.80 / (0.5 * 2) ** 0.5 = 1.00, a win.
    assert body == ["| coare | easy | sjf 2, unicep 1 | 0.90 | 0.90 | 1.04 | 0.77 | 2 of 3 | no |",
                    "| gen-cpu-11 | easy | f1 2 | 0.80 | 0.50 | 0.80 | 1.00 | 1 of 2 | yes |"]
    assert any("at 3 loads" in line for line in section)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))


def test_gpu_short_widest_generates_the_gpu_training_sites_with_it_and_nothing_else(monkeypatch):
    calls = []
    monkeypatch.setattr(pp.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    args = types.SimpleNamespace(rlsched="rlsched", generated_jobs=500, gpu_short_widest=0.75)
    gpu = pp.training_site(args, "gpu", 3, "/tmp/k")
    cpu = pp.training_site(args, "cpu", 3, "/tmp/k")
    judged = pp.generate(args, "gpu", 9790, 500, "/tmp/k")
    assert calls[0][-2:] == ["--short-share-widest", "0.75"]
    assert gpu == {"trace": "/tmp/k/gen-gpu-3-w0.75.sacct", "eval_jobs": None,
                   "cluster": "/tmp/k/gen-gpu-3-w0.75.cluster.yaml"}
    assert "--short-share-widest" not in calls[1] and cpu["trace"] == "/tmp/k/gen-cpu-3.swf"
    assert "--short-share-widest" not in calls[2] and judged["trace"] == "/tmp/k/gen-gpu-9790.sacct"
    args.gpu_short_widest = None
    pp.training_site(args, "gpu", 3, "/tmp/k")
    assert "--short-share-widest" not in calls[3]


def test_a_gpu_short_widest_out_of_range_is_refused_before_anything_runs(tmp_path):
    keep = tmp_path / "kept"
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--gpu-short-widest", "1.5",
                          "--rlsched", str(tmp_path / "missing"), "--keep", str(keep)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "--gpu-short-widest 1.5: a share, in [0, 1]" in run.stderr
    assert not keep.exists()


def test_validation_sites_cover_the_families_trained_on_and_never_the_one_a_fold_leaves_out(monkeypatch):
    calls = []
    monkeypatch.setattr(pp.subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    args = types.SimpleNamespace(rlsched="rlsched", validation_sites=2, validation_seed=20001, config="rlsched.yaml",
                                 threads=0, train_minutes=8, seed=1, train_arg=[])
    pool = ["lublin", "train-cpu-1", "train-gpu-1", "gen-cpu-9787", "gen-gpu-9788"]
    everything = pp.validation_sites(args, pool, "/tmp/k")
    assert [spec["trace"] for spec in everything] == [
        "/tmp/k/validation-cpu-20001.swf", "/tmp/k/validation-cpu-20002.swf",
        "/tmp/k/validation-gpu-20001.sacct", "/tmp/k/validation-gpu-20002.sacct"]
    assert all(cmd[cmd.index("--jobs") + 1] == str(pp.VALIDATION_JOBS) for cmd in calls)
    without_cpu = pp.validation_sites(args, pp.fold_sources(pool, "gen-cpu"), "/tmp/k")
    assert [spec["trace"] for spec in without_cpu] == ["/tmp/k/validation-gpu-20001.sacct",
                                                      "/tmp/k/validation-gpu-20002.sacct"]
    assert pp.validation_sites(args, ["lublin", "coare"], "/tmp/k") == []  # no family: chosen as before

    commands = []
    monkeypatch.setattr(pp, "run", lambda cmd, log: commands.append(cmd) or 0.0)
    pp.train(args, "m", [{"trace": "lublin.swf"}], "/tmp/k", None, validation=without_cpu)
    cmd = commands[0]
    pairs = [(cmd[i + 1], cmd[i + 3]) for i, a in enumerate(cmd) if a == "--validation-trace"]
    assert pairs == [("/tmp/k/validation-gpu-20001.sacct", "/tmp/k/validation-gpu-20001.cluster.yaml"),
                     ("/tmp/k/validation-gpu-20002.sacct", "/tmp/k/validation-gpu-20002.cluster.yaml")]
    assert all(cmd[i + 2] == "--validation-cluster" for i, a in enumerate(cmd) if a == "--validation-trace")


def test_validation_sites_on_a_judged_or_training_seed_are_refused_before_anything_runs(tmp_path):
    keep = tmp_path / "kept"
    run = subprocess.run([sys.executable, str(Path(pp.__file__)), "--protocol", "loo", "--validation-sites", "3",
                          "--validation-seed", "11", "--training-seeds", "1-12", "--rlsched",
                          str(tmp_path / "missing"), "--keep", str(keep)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "--validation-seed 11: the validation sites' seeds 11-13 meet the judged or training seeds" in run.stderr
    assert not keep.exists()

"""The kernel-learning part of the paper suite (benchmarks/papers/learning.py): loaders, protocol, report.

The data-dependent tests skip when ../shared/data (or $SPECTRALKIT_DATA) is absent.
"""

import json
import multiprocessing
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.papers import datasets as D  # noqa: E402 (after the sys.path entry)
from benchmarks.papers import learning as LRN  # noqa: E402
from benchmarks.papers import run as RUN  # noqa: E402

try:
    D.resolve_data_dir()
    HAVE_DATA = all((D.resolve_data_dir() / f).is_file() for f in LRN.KEEL.values())
except D.DataNotFoundError:
    HAVE_DATA = False
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="benchmark data folder ../shared/data not present")


@needs_data
@pytest.mark.parametrize(
    "name, shape, counts",
    [
        ("australian", (690, 14), (383, 307)),
        ("heart", (270, 13), (150, 120)),
        ("sonar", (208, 60), (111, 97)),
        ("wine", (178, 13), (59, 71, 48)),
    ],
)
def test_keel_files_load_with_their_documented_shapes(name, shape, counts):
    X, y, notes = LRN.load_keel(name)
    assert X.shape == shape
    assert tuple(np.unique(y, return_counts=True)[1]) == counts
    assert X.min() == 0.0 and X.max() == 1.0 and np.all(np.isfinite(X))
    assert any("min-max" in n for n in notes)


def test_missing_keel_file_names_the_path(tmp_path):
    with pytest.raises(D.DataNotFoundError, match="keel-sonar.dat"):
        LRN.load_keel("sonar", data_dir=tmp_path)
    with pytest.raises(ValueError, match="name must be one of"):
        LRN.load_keel("fertility")


@needs_data
@pytest.mark.slow
def test_ideal_kernel_protocol_on_heart_one_trial():
    recs = LRN.ideal_kernel_experiment("heart", ("krr_radial",), trials=1, seed=0)
    by = {r["method"]: r for r in recs}
    assert set(by) == {"krr_radial", "svm_cv"}
    r = by["krr_radial"]
    assert r["n_train"] == 108 and r["n_test"] == 162
    assert 0.6 < r["accuracy"][0] <= 1.0  # far above the 55.6 % majority class
    k = r["kernel"][0]
    assert k["neg_eig_fraction"] > 0  # the learned kernel is indefinite
    assert abs(k["mass_plus"]["value"] - k["mass_minus"]["value"] - k["k0"]) < 1e-8 * k["mass_plus"]["value"]


@needs_data
@pytest.mark.slow
def test_known_kernel_protocol_on_wine_one_trial():
    recs = LRN.known_kernel_experiment("wine", "gaussian", ("krr_radial",), trials=1, seed=0)
    by = {r["method"]: r for r in recs}
    assert by["known"]["rmse"] == [0.0]
    # the Gaussian target is itself radial: the radial hyper-kernel reproduces it closely
    assert by["krr_radial"]["rmse"][0] < 0.01
    assert abs(by["krr_radial"]["test"][0] - by["known"]["test"][0]) < 0.1


def test_known_kernels_and_published_tables():
    A = np.array([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(LRN.known_kernel_matrix("log", A, A), [[0, -np.log(6)], [-np.log(6), 0]])
    np.testing.assert_allclose(LRN.known_kernel_matrix("gaussian", A, A, gamma=0.1)[0, 1], np.exp(-2.5))
    with pytest.raises(ValueError, match="kind must be"):
        LRN.known_kernel_matrix("laplace", A, A)
    assert set(LRN.PUBLISHED_T2["svr_gaussian"]) == {"australian", "wine", "sonar", "heart"}
    assert LRN.PUBLISHED_T2["svr_gaussian"]["sonar"] == (82.32, 3.34)
    assert LRN.PUBLISHED_T1["log"]["svr_gaussian"]["australian"]["rmse"] == 0.474
    assert LRN.PUBLISHED_T3[20]["krr_gaussian"] == (90.94, 752.1)


def _records():
    ideal = [
        {
            "dataset": "heart",
            "method": m,
            "accuracy": [0.8, 0.82],
            "mean": 0.81,
            "std": 0.014,
            "fit_seconds": [1.0, 1.0],
            "chosen": [{"scale_multiplier": 1.0, "alpha": 1e-4}] * 2,
            "kernel": [{"neg_eig_fraction": 0.1}] * 2,
        }
        for m in ("krr_gaussian", "svm_cv")
    ]
    known = [
        {
            "dataset": "heart",
            "kernel": "log",
            "method": m,
            "unlabel_mean": 0.8,
            "unlabel_std": 0.01,
            "test_mean": 0.79,
            "test_std": 0.02,
            "rmse_mean": 0.1,
            "rmse_std": 0.01,
        }
        for m in ("known", "krr_gaussian")
    ]
    large = [
        {
            "method": "krr_gaussian",
            "v": 5,
            "accuracy": 0.91,
            "fit_seconds": 10.0,
            "svm_seconds": 5.0,
            "n_landmarks": 20,
            "alpha": 1e-4,
            "majority": 0.905,
            "n_svm": 5000,
        }
    ]
    return ideal, known, large


def test_report_section_renders_every_table():
    ideal, known, large = _records()
    lines = LRN.report_section({"ideal": ideal, "known": known, "large": large, "config": {"trials": 2}})
    text = "\n".join(lines)
    assert "### Table 2" in text and "### Table 1" in text and "### Table 3" in text
    assert "81.00 ± 1.40 (n=2) | 81.11 ± 3.12" in text  # ours | the paper
    assert "90.5 % one class" in text
    assert LRN.report_section(None) == []


def test_runner_knows_the_learning_experiment():
    args = RUN.build_parser().parse_args(["--experiments", "learning", "--learning-tables", "2"])
    assert args.experiments == ["learning"] and args.learning_tables == [2]
    merged = RUN._merge(
        {
            "approximation": [],
            "classification": [],
            "regression": [],
            "kernels": [],
            "learning": {"ideal": [1]},
            "meta": {},
        },
        {"approximation": [], "classification": [], "regression": [], "kernels": [], "meta": {}},
    )
    assert merged["learning"] == {"ideal": [1]}
    # one run per table: the tables are combined, each run's time and load kept
    ideal, known, _ = _records()
    t2 = {"ideal": ideal, "known": [], "large": [], "config": {"trials": 10, "seconds": 60.0}}
    t1 = {
        "ideal": [],
        "known": known,
        "large": [],
        "config": {
            "trials": 10,
            "seconds": 120.0,
            "load_average_start": [1, 2, 3],
            "load_average_end": [3, 2, 1],
        },
    }
    both = LRN.merge_learning(t2, t1)
    assert both["ideal"] == ideal and both["known"] == known and both["large"] == []
    assert [r["tables"] for r in both["config"]["runs"]] == [[2], [1]]
    text = "\n".join(LRN.report_section(both))
    assert "table 2: 1 min, not recorded; table 1: 2 min, (1.0, 2.0, 3.0) → (3.0, 2.0, 1.0)" in text
    assert "Trials: 10." in text
    # fewer trials for one table: the page says which table got how many
    t1["config"]["trials"] = 3
    text = "\n".join(LRN.report_section(LRN.merge_learning(t2, t1)))
    assert "Trials: 10 (table 2), 3 (table 1)." in text


def test_a_rerun_of_a_table_replaces_the_earlier_runs_description():
    ideal, known, large = _records()

    def run(tables, trials, minutes, command):
        recs = {"ideal": ideal if 2 in tables else [], "known": known if 1 in tables else []}
        recs["large"] = large if 3 in tables else []
        cfg = {"trials": trials, "seconds": 60.0 * minutes, "command": command, "git_commit": command}
        return dict(recs, config=dict(cfg, load_average_start=[1, 1, 1], load_average_end=[2, 2, 2]))

    pages = LRN.merge_learning(
        LRN.merge_learning(run((2, 3), 10, 30, "a"), run((1,), 3, 36, "b")), run((1,), 10, 62, "c")
    )
    assert [(r["command"], r["tables"]) for r in pages["config"]["runs"]] == [("a", [2, 3]), ("c", [1])]
    text = "\n".join(LRN.report_section(pages))
    assert "Trials: 10." in text  # not "10 (tables 1, 2, 3), 3 (table 1)"
    assert "tables 2, 3: 30 min, (1.0, 1.0, 1.0) → (2.0, 2.0, 2.0); table 1: 62 min" in text
    assert "`b`" not in text and "36 min" not in text
    assert "command" not in pages["config"] and "seconds" not in pages["config"]  # per-run only
    # a run replaced in part keeps its other tables, and its time says what else it computed
    part = LRN.merge_learning(run((2, 3), 10, 30, "a"), run((3,), 10, 5, "d"))
    assert [(r["command"], r["tables"]) for r in part["config"]["runs"]] == [("a", [2]), ("d", [3])]
    text = "\n".join(LRN.report_section(part))
    assert "table 2 (its run also computed table 3, since replaced): 30 min" in text
    assert part["ideal"] == ideal and part["large"] == large


def test_a_rerun_of_some_datasets_replaces_only_their_rows():
    def rec(name, method, mean):
        return {"dataset": name, "method": method, "mean": mean}

    cfg = {"trials": 10, "seconds": 60.0, "command": "a", "git_commit": "a", "datasets": ["wine", "sonar"]}
    old = {
        "ideal": [rec("wine", "krr_gaussian", 0.1), rec("sonar", "krr_gaussian", 0.2)],
        "known": [rec("wine", "krr_gaussian", 0.3)],
        "large": [{"method": "krr_gaussian"}],
        "config": cfg,
    }
    new = {
        "ideal": [rec("wine", "krr_gaussian", 0.9)],
        "known": [],
        "large": [],
        "config": {
            "trials": 10,
            "seconds": 5.0,
            "command": "b",
            "git_commit": "b",
            "only_datasets": ["wine"],
        },
    }
    both = LRN.merge_learning(old, new)
    assert both["ideal"] == [rec("wine", "krr_gaussian", 0.9), rec("sonar", "krr_gaussian", 0.2)]
    assert both["known"] == old["known"] and both["large"] == old["large"]  # not re-run: kept
    assert both["config"]["datasets"] == ["wine", "sonar"]
    assert [r["command"] for r in both["config"]["runs"]] == ["a", "b"]
    text = "\n".join(LRN._run_lines(both["config"], both))
    assert "`b`" in text and "datasets wine only (their rows replace the earlier run's)" in text
    plan = LRN.learning_plan(2, (1, 2), datasets=["sonar", "wine"])
    assert plan[0] == ("wine", "sonar") and {t[1] for t in plan[2]} == {"wine", "sonar"}
    with pytest.raises(ValueError, match="datasets must be a non-empty subset"):
        LRN.learning_plan(2, (2,), datasets=["iris"])
    args = RUN.build_parser().parse_args(["--experiments", "learning", "--learning-datasets", "wine"])
    assert args.learning_datasets == ["wine"]


def test_a_rerun_of_some_learners_replaces_only_their_rows_and_names_its_grid(monkeypatch):
    def rec(name, method, mean, kernel=None):
        return {"dataset": name, "method": method, "mean": mean} | ({"kernel": kernel} if kernel else {})

    old = {
        "ideal": [
            rec(n, m, 0.1) for n in ("wine", "heart") for m in ("krr_gaussian", "krr_wishart", "svm_cv")
        ],
        "known": [rec("heart", m, 0.2, k) for k in ("gaussian", "log") for m in ("known", "krr_gaussian")],
        "large": [{"method": "krr_gaussian"}],
        "config": {"trials": 10, "seconds": 60.0, "command": "a", "git_commit": "a"},
    }
    # the run itself: the learners asked for, no baseline rows (the fake trial honours `baseline`)
    _fake_learning(monkeypatch)
    new = LRN.run_learning(trials=2, tables=(1, 2), datasets=["heart"], methods=["krr_gaussian"])
    assert {r["method"] for r in new["ideal"]} == {"krr_gaussian"}
    assert new["config"]["only_methods"] == ["krr_gaussian"]
    assert new["config"]["scale_grids"]["gaussian"][0] == 1 / 64
    new["config"].update(command="b", git_commit="b")
    both = LRN.merge_learning(old, new)
    got = [(r["dataset"], r["method"], r["mean"]) for r in both["ideal"]]
    assert got == [
        ("wine", "krr_gaussian", 0.1),
        ("wine", "krr_wishart", 0.1),
        ("wine", "svm_cv", 0.1),
        ("heart", "krr_gaussian", 0.5),  # replaced, in its place
        ("heart", "krr_wishart", 0.1),
        ("heart", "svm_cv", 0.1),  # the baseline stays
    ]
    known = [(r["kernel"], r["method"], r.get("test_mean", r.get("mean"))) for r in both["known"]]
    assert [k[:2] for k in known] == [(k, m) for k in ("gaussian", "log") for m in ("known", "krr_gaussian")]
    assert known[0][2] == 0.2 and known[1][2] != 0.2  # the known kernel's own row stays too
    text = "\n".join(LRN._run_lines(both["config"], both)) + LRN._grid_text(both["config"], both)
    assert "{1/4, 1/2, 1, 2, 4} (Wishart and radial;" in text
    assert "learners hyper-KRR (Gaussian) only (their rows replace the earlier run's)" in text
    assert "`a` on git `a`" in text and "Gaussian scale grid {1/4, 1/2, 1, 2, 4}" in text
    assert "Gaussian scale grid {1/64, 1/16, 1/4, 1, 4}" in text
    # the edge counts read each row's grid from the run that computed it
    grid = LRN._row_scale_grid
    assert grid(both, 2, {"dataset": "heart", "method": "krr_gaussian"})[0] == 1 / 64
    assert grid(both, 2, {"dataset": "wine", "method": "krr_gaussian"}) == (0.25, 0.5, 1.0, 2.0, 4.0)
    assert grid(both, 2, {"dataset": "heart", "method": "krr_wishart"}) == (0.25, 0.5, 1.0, 2.0, 4.0)
    with pytest.raises(ValueError, match="methods must be a non-empty subset"):
        LRN.learning_plan(2, (2,), methods=["svm_cv"])
    args = RUN.build_parser().parse_args(["--experiments", "learning", "--learning-methods", "svr_gaussian"])
    assert args.learning_methods == ["svr_gaussian"]


def test_learning_tasks_run_the_longest_first_and_cover_every_trial():
    tasks = LRN.learning_tasks(("wine", "australian"), trials=2, tables=(1, 2, 3))
    keys = [LRN.task_key(t) for t in tasks]
    assert keys[0] == "large"  # Table 3 is one long task: it starts first
    assert keys[1:5] == [
        "known/australian/gaussian/0",
        "known/australian/gaussian/1",
        "known/australian/log/0",
        "known/australian/log/1",
    ]
    assert len(keys) == len(set(keys)) == 1 + 2 * (2 * 2 + 2)
    assert "ideal/wine/1" in keys and "known/wine/log/1" in keys
    assert LRN.learning_tasks(("heart",), 1, (2, 3), quick=True) == [("ideal", "heart", 0)]


def _fake_task_output(task, methods, seed=0, data_dir=None, blas_threads=1, baseline=True):
    """A stand-in for LRN.run_task: one trial's outputs without computing anything."""
    if task is not None and task[0] == "known":
        row = {"unlabel": 0.5, "test": 0.5, "rmse": 0.1, "fit_seconds": 1.0}
        return {m: dict(row) for m in ("known", *LRN._known_methods(methods))}
    out = {
        m: {"accuracy": 0.5, "fit_seconds": 1.0, "svm_seconds": 0.0, "chosen": {}, "kernel": {}}
        for m in methods
    }
    return out | ({"svm_cv": {"accuracy": 0.75, "fit_seconds": 1.0, "chosen": {}}} if baseline else {})


def _fake_learning(monkeypatch, run_task=_fake_task_output):
    monkeypatch.setattr(LRN, "run_task", run_task)
    monkeypatch.setattr(LRN, "load_keel", lambda name, data_dir=None: (np.zeros((10, 2)), None, ["n"]))


def test_run_learning_skips_finished_tasks_and_checkpoints_each(monkeypatch):
    calls, saved = [], []

    def fake(task, *args, **kwargs):
        calls.append(task)
        return _fake_task_output(task, *args, **kwargs)

    _fake_learning(monkeypatch, fake)
    done = {"ideal/heart/0": _fake_task_output(None, ("krr_gaussian", "krr_radial"))}
    out = LRN.run_learning(
        trials=3, quick=True, tables=(2,), done=done, checkpoint=lambda d: saved.append(set(d))
    )
    assert calls == [("ideal", "heart", 1), ("ideal", "heart", 2)]
    assert saved == [{"ideal/heart/0", "ideal/heart/1"}, {"ideal/heart/0", "ideal/heart/1", "ideal/heart/2"}]
    by = {r["method"]: r for r in out["ideal"]}
    assert by["svm_cv"]["accuracy"] == [0.75] * 3 and by["krr_radial"]["n_train"] == 4
    assert out["config"]["tasks"] == 3 and out["config"]["tasks_resumed"] == 1
    with pytest.raises(ValueError, match="jobs must be >= 1, got 0"):
        LRN.run_learning(quick=True, tables=(2,), jobs=0)


def _checkpoint(settings, tasks, made_on):
    body = {"settings": settings, "tasks": tasks, "made_on": made_on}
    body["digest"] = RUN._digest(body)
    return body


def test_resume_refuses_a_checkpoint_of_other_settings(tmp_path):
    ck = tmp_path / "learning_checkpoint.json"
    ck.write_text(
        json.dumps(_checkpoint({"trials": 10, "seed": 0, "quick": False, "tables": [1, 2, 3]}, {}, {}))
    )
    args = RUN.build_parser().parse_args(["--experiments", "learning", "--learning-trials", "3", "--resume"])
    with pytest.raises(RUN.CheckpointError, match="learning_checkpoint.json was made with .*'trials': 10"):
        RUN._run_learning(args, False, None, ck)


_QUICK_SETTINGS = {"trials": 2, "seed": 0, "quick": True, "tables": [2]}


def _good_checkpoint(commit="c0ffee"):
    task = _fake_task_output(None, ("krr_gaussian", "krr_radial"))
    return _checkpoint(_QUICK_SETTINGS, {"ideal/heart/0": task}, {"ideal/heart/0": commit})


def _edited_accuracy(body):
    body["tasks"]["ideal/heart/0"]["krr_radial"]["accuracy"] = 0.999


def _out_of_range(body):
    body["tasks"]["ideal/heart/0"]["krr_radial"]["accuracy"] = 99.9
    body["digest"] = RUN._digest(body)


def _unplanned(body):
    body["tasks"]["ideal/heart/7"] = body["tasks"]["ideal/heart/0"]
    body["made_on"]["ideal/heart/7"] = "c0ffee"
    body["digest"] = RUN._digest(body)


def _settings(body):
    body["settings"] = dict(_QUICK_SETTINGS, seed=5)
    body["digest"] = RUN._digest(body)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda ck: ck.write_text(json.dumps(_good_checkpoint())[:40]), "is not valid JSON"),
        (lambda ck: ck.write_text(""), "is empty"),
        (lambda ck: ck.write_text("[1, 2]"), "is not a learning checkpoint of this version"),
        (lambda ck: ck.write_text('"text"'), "is not a learning checkpoint of this version"),
        (lambda ck: ck.mkdir(), "is not a regular file"),
        (lambda ck: ck.write_bytes(b"\xff\xfe"), "is not valid JSON"),
        (lambda ck: _write_edited(ck, _edited_accuracy), "fails its digest"),
        (lambda ck: _write_edited(ck, _out_of_range), "is not an accuracy in [0, 1]"),
        (lambda ck: _write_edited(ck, _unplanned), "holds tasks this run does not plan"),
        (lambda ck: _write_edited(ck, _settings), "was made with"),
        (
            lambda ck: ck.write_text(json.dumps(_good_checkpoint("0ther"))),
            "was made on git 0ther, this is c0ffee",
        ),
    ],
)
def test_resume_validates_the_checkpoint_with_one_line(tmp_path, monkeypatch, capsys, make, match):
    """A bad checkpoint ends the run before any work with one ``error:`` line (exit 2), no traceback."""
    _fake_learning(monkeypatch)
    monkeypatch.setattr(RUN, "_git_commit", lambda: "c0ffee")
    ck = tmp_path / "learning_checkpoint_quick.json"
    make(ck)
    argv = [
        "--quick",
        "--experiments",
        "learning",
        "--learning-tables",
        "2",
        "--resume",
        "--out",
        str(tmp_path),
    ]
    assert RUN.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --resume: the checkpoint"), err
    assert match in err[0], err
    assert not (tmp_path / "papers_quick.json").exists()  # nothing reached the results


def _write_edited(ck, change):
    body = _good_checkpoint()
    change(body)
    ck.write_text(json.dumps(body))


def test_a_valid_checkpoint_resumes_and_other_commits_need_a_flag(tmp_path, monkeypatch):
    _fake_learning(monkeypatch)
    monkeypatch.setattr(RUN, "_git_commit", lambda: "c0ffee")
    ck = tmp_path / "learning_checkpoint.json"
    ck.write_text(json.dumps(_good_checkpoint()))
    args = RUN.build_parser().parse_args(
        ["--experiments", "learning", "--learning-tables", "2", "--learning-trials", "2", "--resume"]
    )
    assert RUN._run_learning(args, True, None, ck)["config"]["tasks_resumed"] == 1
    saved = json.loads(ck.read_text())
    assert saved["digest"] == RUN._digest(saved)  # what it writes, it can read back


@pytest.mark.parametrize("recorded", [True, False])
def test_a_resumed_run_says_where_its_resumed_tasks_came_from(tmp_path, monkeypatch, recorded):
    _fake_learning(monkeypatch)
    monkeypatch.setattr(RUN, "_git_commit", lambda: "newcommit")
    ck = tmp_path / "learning_checkpoint.json"
    saved = _checkpoint(
        _QUICK_SETTINGS,
        {"ideal/heart/0": _fake_task_output(None, ("krr_gaussian", "krr_radial"))},
        {"ideal/heart/0": "oldcommit" if recorded else None},
    )
    ck.write_text(json.dumps(saved))
    args = RUN.build_parser().parse_args(
        ["--experiments", "learning", "--learning-tables", "2", "--learning-trials", "2", "--resume"]
        + ["--resume-other-commit"]
    )
    out = RUN._run_learning(args, True, None, ck)
    cfg = out["config"]
    assert cfg["tasks_resumed"] == 1 and cfg["git_commit"] == "newcommit"
    assert cfg["resumed_on"] == (["oldcommit"] if recorded else [None])
    # the checkpoint keeps each task's commit (for a later resume)
    assert json.loads(ck.read_text())["made_on"] == {
        "ideal/heart/0": "oldcommit" if recorded else None,
        "ideal/heart/1": "newcommit",
    }
    (line,) = LRN._run_lines(cfg, out)  # the page's line for the run
    on = "`oldcommit`" if recorded else "not recorded"
    assert line.startswith("- Run: `python -m benchmarks.papers.run") and "on git `newcommit`" in line
    assert f"1 of its 2 tasks resumed from the checkpoint of an interrupted run (computed on git {on}" in line
    # merged with an earlier run of the same table, the page describes the new run only
    merged = LRN.merge_learning(out, out)
    assert LRN._run_lines(merged["config"], merged) == [line]


def test_a_learning_run_merged_into_the_results_keeps_the_page_header():
    rec = {"dataset": "letter", "kernel": "gaussian", "method": "rff", "ratio": 1.0}
    old = {
        "approximation": [rec],
        "classification": [],
        "regression": [],
        "kernels": [],
        "meta": {"command": "full"},
    }
    new = {
        "approximation": [],
        "classification": [],
        "regression": [],
        "kernels": [],
        "learning": {"ideal": [2]},
        "meta": {"command": "learning", "experiments": ["learning"]},
    }
    merged = RUN._merge(old, new)
    assert merged["meta"] == {"command": "full"} and merged["approximation"] == [rec]
    assert merged["learning"] == {"ideal": [2]}


@needs_data
@pytest.mark.slow
def test_learning_results_do_not_depend_on_the_number_of_processes():
    # two wine trials of Table 1 (log kernel, one learner, the smallest dataset: the comparison, not
    # the learners, is under test) on a pool of two spawned workers, against one of them run here
    tasks, methods = [("known", "wine", "log", 0), ("known", "wine", "log", 1)], ("krr_radial",)
    serial, pooled = {}, {}
    LRN._run_tasks(tasks[1:], methods, 0, None, 1, serial, None, None)
    LRN._run_tasks(tasks, methods, 0, None, 2, pooled, None, None)
    assert len(pooled) == 2
    a, b = serial[LRN.task_key(tasks[1])], pooled[LRN.task_key(tasks[1])]
    for name, field in [("known", "unlabel"), ("known", "test")] + [
        ("krr_radial", f) for f in ("chosen", "unlabel", "test")
    ]:
        assert a[name][field] == b[name][field], (name, field)


@needs_data
def test_a_failed_pooled_run_stops_its_other_workers_at_once():
    # one task fails at once; the other worker is minutes into an australian trial with every
    # learner: it is terminated, not awaited (Ctrl-C and SIGTERM take the same path)
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="unknown task"):
        LRN._run_tasks(
            [("ideal", "australian", 0), ("no such task",)],
            tuple(LRN.LEARNERS),
            0,
            None,
            2,
            {},
            None,
            None,
        )
    # a worker that was just starting may take a moment to exit; one left computing would not
    while multiprocessing.active_children() and time.monotonic() - t0 < 60:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []
    assert time.monotonic() - t0 < 60


def test_sigterm_ends_the_runner_through_an_exception():
    # an exception, not the default action: the learning runner's cleanup runs (above)
    with pytest.raises(SystemExit) as info:
        RUN._exit_on_sigterm(signal.SIGTERM, None)
    assert info.value.code == 143

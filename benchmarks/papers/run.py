"""Runner: ``python -m benchmarks.papers.run [--quick] [--datasets ...] [--reps N] [--out DIR]``.

Runs the papers' protocols (:mod:`.protocol`) for every selected method, writes the results
JSON (``papers.json``, or ``papers_quick.json`` with ``--quick``), the plots
(``papers_<dataset>_<kernel>.png``) and the markdown page. Without ``--out`` the JSON and the
plots go to ``benchmarks/results/`` and the page to ``docs/benchmarks.md`` — except with
``--quick``, which writes everything to ``benchmarks/results/quick/`` (never the committed page);
with ``--out DIR`` everything goes to DIR (``DIR/benchmarks.md``).

``--merge`` keeps the records of an existing JSON and replaces only those recomputed now
(e.g. add the spectralkit methods to a baseline run: ``--methods gorf orf rff --merge``).
"""

import argparse
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import datasets as D
from . import learning as LRN
from . import protocol as P

__all__ = ["main", "build_parser", "run_suite", "DEFAULTS"]

_ROOT = Path(__file__).resolve().parents[2]

#: The default (full) suite.
DEFAULTS = {
    "approx_datasets": ("letter", "ijcnn1", "usps"),
    "approx_kernels": (
        "delta_gaussian",
        "delta_gaussian_box",
        "sph_poly_2_2",
        "sph_poly_3_1",
        "matern",
        "exp_power",
    ),
    # every approximation table gets the papers' 10 repetitions; usps (d = 256) runs the Table II
    # kernels at Table II's s/d values only (its s = 8d = 2048 frequencies per part dominate the
    # cost), the other kernels run on letter and ijcnn1. Budget: under an hour on the 2-core machine.
    "table_kernels": ("delta_gaussian", "sph_poly_3_1"),
    "table_reps": {"letter": 10, "ijcnn1": 10, "usps": 10},
    "usps_ratios": (0.5, 1.0, 2.0, 8.0),
    "extra_reps": 10,
    "extra_datasets": ("letter", "ijcnn1"),
    "svm_datasets": ("letter", "ijcnn1", "usps"),
    "svm_kernels": ("delta_gaussian",),
    "svm_ratios": (0.5, 2.0),
    "svm_reps": 3,
    "svm_train_max": 5000,
    # the SVM runs cost ~100x an approximation task: only the main contenders; on usps liblinear
    # needs ~14 min per fit on the papers' unnormalised features (paper_gorf), more than the rest of
    # the suite together: add it with --datasets usps --experiments svm --methods paper_gorf --merge
    "svm_methods": ("gorf", "orf", "paper_gorf", "nystroem"),
    "svm_methods_excluded": {"usps": ("paper_gorf",)},
    "housing_kernels": ("delta_gaussian", "sph_poly_3_1"),
    "housing_multipliers": (2.0, 4.0, 8.0),
}
_QUICK = {
    "approx_datasets": ("letter",),
    "approx_kernels": ("delta_gaussian", "matern"),
    "ratios": (0.25, 0.5),
    "reps": 2,
    "svm_datasets": ("letter",),
    "svm_kernels": ("delta_gaussian",),
    "svm_ratios": (0.5,),
    "svm_reps": 1,
    "svm_train_max": 2000,
}
_EXPERIMENTS = ("approx", "svm", "housing", "learning")
# the kernel-learning tables take hours: run them when asked (--experiments learning)
_DEFAULT_EXPERIMENTS = ("approx", "svm", "housing")


def build_parser():
    p = argparse.ArgumentParser(prog="python -m benchmarks.papers.run", description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: letter only, s/d in {1/4, 1/2}, 2 repetitions, a small SVM",
    )
    p.add_argument(
        "--datasets",
        nargs="+",
        choices=sorted(D.DATASETS),
        default=None,
        help="datasets to run (default: letter ijcnn1 usps housing)",
    )
    p.add_argument(
        "--reps",
        type=int,
        default=None,
        help="repetitions of the approximation and housing experiments (default 10)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: benchmarks/results and docs/benchmarks.md)",
    )
    p.add_argument(
        "--data-dir", type=Path, default=None, help=f"data folder (default: ${D.ENV_VAR} or ../shared/data)"
    )
    p.add_argument("--experiments", nargs="+", choices=_EXPERIMENTS, default=list(_DEFAULT_EXPERIMENTS))
    p.add_argument(
        "--methods", nargs="+", choices=sorted(P.METHODS), default=None, help="methods (default: all)"
    )
    p.add_argument("--kernels", nargs="+", default=None, help="approximation kernels (default: all six)")
    p.add_argument("--ratios", nargs="+", type=float, default=None, help="s/d values (default: the papers')")
    p.add_argument(
        "--svm-reps",
        type=int,
        default=None,
        help=f"repetitions of the SVM experiment (default {DEFAULTS['svm_reps']})",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--merge", action="store_true", help="merge into the existing results JSON")
    p.add_argument("--no-report", action="store_true", help="write the JSON only")
    p.add_argument(
        "--combine",
        nargs="+",
        type=Path,
        default=None,
        metavar="JSON",
        help="do not run: merge these result files (later ones win) into the output and report",
    )
    p.add_argument(
        "--learning-tables",
        nargs="+",
        type=int,
        choices=(1, 2, 3),
        default=[1, 2, 3],
        help="tables of the kernel-learning paper to run with --experiments learning (default: all)",
    )
    p.add_argument(
        "--learning-trials",
        type=int,
        default=None,
        help="trials of the kernel-learning Tables 1-2 (default 10, as the paper; 2 with --quick)",
    )
    p.add_argument(
        "--learning-datasets",
        nargs="+",
        choices=("australian", "wine", "sonar", "heart"),
        default=None,
        help="kernel-learning Tables 1-2: run only these datasets (with --merge their rows replace "
        "the earlier run's; default: all four)",
    )
    p.add_argument(
        "--learning-methods",
        nargs="+",
        choices=tuple(LRN.LEARNERS),
        default=None,
        help="kernel-learning Tables 1-2: run only these learners (with --merge their rows replace "
        "the earlier run's; the baselines are not re-run; default: all six)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes for the kernel-learning tasks (one trial of one dataset each; default 1)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="kernel learning: skip the tasks finished by an interrupted run with the same settings "
        "(kept in learning_checkpoint.json beside the results)",
    )
    p.add_argument(
        "--resume-other-commit",
        action="store_true",
        help="with --resume: accept a checkpoint made on another git commit (the page names its commits)",
    )
    p.add_argument(
        "--no-extension",
        action="store_true",
        help="do not build the smooth finite-mass extension of the spherical polynomials",
    )
    return p


def _versions():
    out = {"python": platform.python_version()}
    for mod in ("numpy", "scipy", "sklearn", "sympy", "numba", "spectralkit"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001 - report whatever is missing
            out[mod] = f"unavailable ({type(exc).__name__})"
    return out


def _machine():
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"platform": platform.platform(), "cpu": cpu, "logical_cpus": os.cpu_count()}


def _git_commit():
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=_ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _spectralkit_status():
    status = {}
    for mod in ("measures", "features", "sampling", "sklearn"):
        try:
            __import__(f"spectralkit.{mod}")
            status[mod] = "available"
        except Exception as exc:  # noqa: BLE001
            status[mod] = f"missing ({type(exc).__name__}: {exc})"
    return status


def _rkks(kernel, dim):
    """check_rkks verdict and masses of ``kernel`` in dimension dim (or why not)."""
    try:
        from spectralkit.measures import check_rkks

        t0 = time.perf_counter()
        rep = check_rkks(kernel, dim)
        out = {"verdict": rep.verdict, "reason": rep.reason, "seconds": time.perf_counter() - t0}
        for name in ("mass_plus", "mass_minus"):
            m = getattr(rep, name)
            out[name] = None if m is None else {"value": float(m.value), "error": float(m.error)}
        return out
    except Exception as exc:  # noqa: BLE001 - recorded in the report
        return {"verdict": "unavailable", "reason": f"{type(exc).__name__}: {exc}"[:300]}


def _kernel_entry(dataset, setup, dim):
    entry = {
        "dataset": dataset,
        "kernel": setup.key,
        "label": setup.label,
        "dim": dim,
        "rkks": _rkks(setup.base, dim),
        "note": setup.note,
    }
    if setup.sampled is not setup.base:
        entry["sampled_name"] = setup.sampled.name
        entry["sampled_formula"] = str(setup.sampled.expr)
        entry["sampled_support"] = setup.sampled.support
        entry["rkks_sampled"] = _rkks(setup.sampled, dim)
    return entry


def _key(exp, rec):
    return (exp, rec["dataset"], rec["kernel"], rec["method"], float(rec["ratio"]))


def run_suite(args, progress_factory=None, checkpoint=None, learning_checkpoint=None):
    """Run the selected experiments; return the results dict (see the module docstring).

    ``checkpoint(partial_results)`` is called after every (dataset, kernel) block;
    ``learning_checkpoint`` (a path or None) keeps the finished kernel-learning tasks (``--resume``).
    """
    quick = args.quick
    reps = args.reps if args.reps is not None else (_QUICK["reps"] if quick else 10)
    if reps < 1:
        raise ValueError(f"--reps must be >= 1, got {reps}")
    ratios = tuple(args.ratios) if args.ratios else (_QUICK["ratios"] if quick else P.RATIOS)
    methods = tuple(args.methods) if args.methods else tuple(P.METHODS)
    cfg = dict(DEFAULTS)
    if quick:
        cfg.update(_QUICK)
    if args.svm_reps is not None:
        if args.svm_reps < 1:
            raise ValueError(f"--svm-reps must be >= 1, got {args.svm_reps}")
        cfg["svm_reps"] = args.svm_reps
    datasets = args.datasets or (("letter",) if quick else ("letter", "ijcnn1", "usps", "housing"))
    approx_kernels = tuple(args.kernels) if args.kernels else cfg["approx_kernels"]
    D.resolve_data_dir(args.data_dir)  # fail early, naming the folder

    def svm_methods(name):
        """The SVM methods on ``name``: the asked ones, else the default ones minus its exclusions."""
        skip = () if args.methods else cfg.get("svm_methods_excluded", {}).get(name, ())
        return [m for m in methods if m in cfg["svm_methods"] and m not in skip]

    def plan_approx(name):
        """(kernel, ratios, reps) of the approximation runs on dataset ``name``."""
        out = []
        for kern in approx_kernels:
            if quick or args.reps is not None or args.ratios:
                out.append((kern, ratios, reps))
            elif kern in cfg["table_kernels"]:
                out.append(
                    (kern, cfg["usps_ratios"] if name == "usps" else ratios, cfg["table_reps"].get(name, 10))
                )
            elif name in cfg["extra_datasets"]:
                out.append((kern, ratios, cfg["extra_reps"]))
        return out

    plan = []
    for name in datasets:
        if "approx" in args.experiments and name in cfg["approx_datasets"]:
            plan.append(("approx", name))
        if "svm" in args.experiments and name in cfg["svm_datasets"]:
            plan.append(("svm", name))
        if "housing" in args.experiments and name == "housing" and not quick:
            plan.append(("housing", name))
    n_methods = len(methods)
    total = 0
    for exp, name in plan:
        if exp == "approx":
            total += sum(len(rt) * n_methods * rp for _, rt, rp in plan_approx(name))
        elif exp == "svm":
            total += (
                len(cfg["svm_kernels"]) * len(cfg["svm_ratios"]) * cfg["svm_reps"] * len(svm_methods(name))
            )
        else:
            total += len(cfg["housing_kernels"]) * len(cfg["housing_multipliers"]) * n_methods * reps
    bar = progress_factory(total) if progress_factory else None
    tick = (lambda: bar.update(1)) if bar else None

    results = {
        "approximation": [],
        "classification": [],
        "regression": [],
        "regression_reference": [],
        "kernels": [],
    }
    t_start = time.time()
    for exp, name in plan:
        if bar:
            bar.set_description(f"{exp}:{name}")
        if exp == "housing":
            ds0 = D.load("housing", args.data_dir, seed=args.seed)
            for setup in P.kernel_setups(
                ds0.X_train, cfg["housing_kernels"], args.seed, not args.no_extension
            ):
                results["kernels"].append(_kernel_entry("housing", setup, ds0.dim))
                if not quick:
                    # exact-kernel reference on the same splits (n = 405: exact Grams are cheap)
                    results["regression_reference"].extend(
                        P.regression_reference(
                            lambda rep: D.load("housing", args.data_dir, seed=args.seed + rep),
                            setup,
                            reps,
                            args.seed,
                        )
                    )
                recs = P.regression_experiment(
                    lambda rep: D.load("housing", args.data_dir, seed=args.seed + rep),
                    setup,
                    methods,
                    cfg["housing_multipliers"],
                    reps,
                    args.seed,
                    progress=tick,
                )
                results["regression"].extend(recs)
                if checkpoint:
                    checkpoint(results)
            continue
        ds = D.load(name, args.data_dir, seed=args.seed)
        if exp == "approx":
            todo = plan_approx(name)
            kernels_here = [k for k, _, _ in todo]
        else:
            kernels_here = cfg["svm_kernels"]
        for setup in P.kernel_setups(ds.X_train, kernels_here, args.seed, not args.no_extension):
            if exp == "approx":
                _, rt, rp = next(t for t in todo if t[0] == setup.key)
                results["kernels"].append(_kernel_entry(name, setup, ds.dim))
                results["approximation"].extend(
                    P.approximation_experiment(ds, setup, methods, rt, rp, args.seed, progress=tick)
                )
                if checkpoint:
                    checkpoint(results)
            else:
                results["classification"].extend(
                    P.classification_experiment(
                        ds,
                        setup,
                        svm_methods(name),
                        cfg["svm_ratios"],
                        cfg["svm_reps"],
                        args.seed,
                        n_train_max=cfg["svm_train_max"],
                        progress=tick,
                    )
                )
                if checkpoint:
                    checkpoint(results)
    if bar:
        bar.close()
    if "learning" in args.experiments:
        results["learning"] = _run_learning(args, quick, progress_factory, learning_checkpoint)
    results["meta"] = _meta(args, quick, reps, ratios, methods, datasets, cfg, t_start)
    return results


def _command(argv=None):
    """The command line of this run, as the results record it: without ``--data-dir`` (a path on
    the machine that ran it; elsewhere the data folder comes from the default or the environment)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    kept, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--data-dir":
            skip = True
        elif not a.startswith("--data-dir="):
            kept.append(a)
    return " ".join(["python -m benchmarks.papers.run", *kept])


def _learning_state(args, quick, checkpoint_path):
    """``(settings, tasks, done, made_on, commit)`` of a learning run; ``done`` and ``made_on`` from a
    validated checkpoint with ``--resume`` (:class:`CheckpointError` when it cannot be used)."""
    settings = {
        "trials": args.learning_trials if args.learning_trials is not None else (2 if quick else 10),
        "seed": args.seed,
        "quick": quick,
        "tables": sorted(set(args.learning_tables)),
    }
    only = getattr(args, "learning_datasets", None)
    if only:
        settings["datasets"] = sorted(set(only))
    methods = getattr(args, "learning_methods", None)
    if methods:
        settings["methods"] = [m for m in LRN.LEARNERS if m in methods]
    commit = _git_commit()
    _, _, tasks = LRN.learning_plan(
        settings["trials"], settings["tables"], quick, settings.get("datasets"), settings.get("methods")
    )
    done, made_on = {}, {}  # made_on: the git commit each finished task was computed on
    if (
        args.resume
        and checkpoint_path is not None
        and (checkpoint_path.exists() or checkpoint_path.is_symlink())
    ):
        done, made_on = _load_checkpoint(
            checkpoint_path,
            settings,
            commit,
            {LRN.task_key(t) for t in tasks},
            getattr(args, "resume_other_commit", False),
        )
    return settings, tasks, done, made_on, commit


def _run_learning(args, quick, progress_factory, checkpoint_path):
    """The kernel-learning tables, on ``--jobs`` processes, resumable from ``checkpoint_path``.

    ``run_learning`` validates the trials and the process count.
    """
    settings, tasks, done, made_on, commit = _learning_state(args, quick, checkpoint_path)
    resumed_on = sorted(set(made_on.values()), key=str)

    def save(tasks):
        for key in tasks:
            made_on.setdefault(key, commit)
        if checkpoint_path is not None:
            body = json.loads(
                json.dumps({"settings": settings, "tasks": tasks, "made_on": made_on}, default=_default)
            )
            body["digest"] = _digest(body)  # binds the tasks to the settings and commits
            _write_atomic(checkpoint_path, json.dumps(body))

    bar = progress_factory(sum(LRN.task_key(t) not in done for t in tasks)) if progress_factory else None
    out = LRN.run_learning(
        args.data_dir,
        trials=settings["trials"],
        seed=args.seed,
        quick=quick,
        tables=tuple(settings["tables"]),
        progress=(lambda: bar.update(1)) if bar else None,
        jobs=args.jobs,
        checkpoint=save,
        done=done,
        datasets=settings.get("datasets"),
        methods=settings.get("methods"),
    )
    if bar:
        bar.close()
    out["config"].update(
        command=_command(),
        git_commit=commit,
        date_utc=time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        machine=_machine(),
        resumed_on=resumed_on,  # the commits of the tasks taken from the checkpoint (None: not recorded)
    )
    return out


class CheckpointError(ValueError):
    """A learning checkpoint that cannot be resumed from (the message is one line)."""


def _digest(body):
    """sha256 of a checkpoint's settings, tasks and commits (catches edits and partial writes)."""
    payload = {k: body.get(k) for k in ("settings", "tasks", "made_on")}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, allow_nan=False).encode()).hexdigest()


def _check_numbers(value, where):
    """Every number finite; accuracies in [0, 1]; times, errors and counts >= 0."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_numbers(v, f"{where}.{k}")
            last = str(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                if last == "accuracy" and not 0.0 <= v <= 1.0:
                    raise CheckpointError(f"{where}.{k} = {v!r} is not an accuracy in [0, 1]")
                if (last.endswith("seconds") or last in ("rmse", "test", "unlabel")) and v < 0:
                    raise CheckpointError(f"{where}.{k} = {v!r} is negative")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_numbers(v, f"{where}[{i}]")
    elif isinstance(value, float) and not np.isfinite(value):
        raise CheckpointError(f"{where} = {value!r} is not finite")
    elif value is not None and not isinstance(value, (bool, int, float, str)):
        raise CheckpointError(f"{where} has an unexpected {type(value).__name__}")


def _load_checkpoint(path, settings, commit, planned, other_commit):
    """``(done, made_on)`` of a learning checkpoint, validated; :class:`CheckpointError` otherwise.

    The checkpoint must be a regular JSON file holding this run's settings, tasks of this run's plan
    with well-formed outputs, the commit of every task (this run's commit unless ``other_commit``)
    and the sha256 digest written with it (an edited or truncated file fails it).
    """
    where = f"--resume: the checkpoint {path}"
    if not path.is_file():
        raise CheckpointError(f"{where} is not a regular file; remove it or run without --resume")
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = (
            "is empty" if path.stat().st_size == 0 else f"is not valid JSON ({type(exc).__name__}: {exc})"
        )
        raise CheckpointError(f"{where} {reason}; remove it or run without --resume") from None
    if not isinstance(body, dict) or not {"settings", "tasks", "made_on", "digest"} <= set(body):
        raise CheckpointError(
            f"{where} is not a learning checkpoint of this version (settings, tasks, made_on and digest "
            "expected); remove it or run without --resume"
        )
    if body["settings"] != settings:
        raise CheckpointError(
            f"{where} was made with {body['settings']}, this run asks for {settings}; remove it or run "
            "with its settings"
        )
    tasks, made_on = body["tasks"], body["made_on"]
    if not isinstance(tasks, dict) or not isinstance(made_on, dict) or set(made_on) != set(tasks):
        raise CheckpointError(f"{where} has malformed tasks or commits; remove it or run without --resume")
    if body["digest"] != _digest(body):
        raise CheckpointError(
            f"{where} fails its digest (edited or corrupted); remove it or run without --resume"
        )
    unknown = sorted(set(tasks) - planned)
    if unknown:
        raise CheckpointError(f"{where} holds tasks this run does not plan ({unknown[0]}, ...)")
    for key, out in tasks.items():
        if not isinstance(out, dict):
            raise CheckpointError(f"{where}: task {key} is not an object")
        try:
            _check_numbers(out, key)
        except CheckpointError as exc:
            raise CheckpointError(f"{where}: {exc}") from None
    others = sorted({str(c) for c in made_on.values() if c != commit})
    if others and not other_commit:
        raise CheckpointError(
            f"{where} was made on git {', '.join(others)}, this is {commit}; check that commit out, remove the "
            "checkpoint, or pass --resume-other-commit"
        )
    return dict(tasks), dict(made_on)


def _write_atomic(path, text):
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _meta(args, quick, reps, ratios, methods, datasets, cfg, t_start):
    return {
        "command": _command(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "seconds": time.time() - t_start,
        "quick": quick,
        "seed": args.seed,
        "reps": reps,
        "ratios": list(ratios),
        "methods": list(methods),
        "datasets": list(datasets),
        "experiments": list(args.experiments),
        "svm": {
            "ratios": list(cfg["svm_ratios"]),
            "reps": cfg["svm_reps"],
            "methods": list(cfg["svm_methods"]),
            "excluded": {k: list(v) for k, v in cfg.get("svm_methods_excluded", {}).items()},
            "train_max": cfg["svm_train_max"],
            "C_grid": list(P.C_GRID),
        },
        "housing": {
            "multipliers": list(cfg["housing_multipliers"]),
            "lambda_grid": list(P.LAMBDA_GRID),
            "svr_grid": {k: list(v) for k, v in P.SVR_GRID.items()},
        },
        "machine": _machine(),
        "versions": _versions(),
        "git_commit": _git_commit(),
        "spectralkit_modules": _spectralkit_status(),
        "plan": {
            "table_kernels": list(cfg.get("table_kernels", ())),
            "table_reps": cfg.get("table_reps"),
            "usps_ratios": list(cfg.get("usps_ratios", ())),
            "extra_reps": cfg.get("extra_reps"),
            "extra_datasets": list(cfg.get("extra_datasets", ())),
        },
    }


def _merge(old, new):
    out = dict(new)
    for exp in ("approximation", "classification", "regression"):
        fresh = {_key(exp, r) for r in new[exp]}
        out[exp] = [r for r in old.get(exp, []) if _key(exp, r) not in fresh] + new[exp]
    fresh = {(r["kernel"], r["model"]) for r in new.get("regression_reference", [])}
    out["regression_reference"] = [
        r for r in old.get("regression_reference", []) if (r["kernel"], r["model"]) not in fresh
    ] + new.get("regression_reference", [])
    seen = {(k["dataset"], k["kernel"]) for k in new["kernels"]}
    out["kernels"] = [k for k in old.get("kernels", []) if (k["dataset"], k["kernel"]) not in seen] + new[
        "kernels"
    ]
    if "learning" in new or "learning" in old:
        out["learning"] = LRN.merge_learning(old.get("learning"), new.get("learning"))
    if new.get("meta", {}).get("experiments") == ["learning"] and old.get("meta"):
        # a kernel-learning run records its own command, commit and times in its section: the
        # page header keeps describing the run that made the other tables
        return dict(out, meta=old["meta"])
    out["meta"] = dict(new.get("meta", {}), merged_from=old.get("meta", {}).get("command"))
    out["meta"]["methods"] = sorted(
        set(old.get("meta", {}).get("methods", [])) | set(new.get("meta", {}).get("methods", []))
    )
    return out


class _Plain:
    """Minimal progress printer when tqdm is not installed."""

    def __init__(self, total):
        self.total, self.n, self.desc = total, 0, ""

    def update(self, k):
        self.n += k
        if self.n % max(1, self.total // 20) == 0:
            print(f"[{self.n}/{self.total}] {self.desc}", file=sys.stderr, flush=True)

    def set_description(self, desc):
        self.desc = desc

    def close(self):
        pass


def _progress(total):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="task", file=sys.stderr)
    except ImportError:
        return _Plain(total)


def _default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _exit_on_sigterm(signum, frame):
    """SIGTERM as an exception, so that the learning runner stops its worker processes (the
    default action would end this process alone and leave them computing)."""
    raise SystemExit(128 + signum)


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.out is None and args.quick:
        # a smoke run never touches the committed page, JSON or plots
        out_dir = _ROOT / "benchmarks" / "results" / "quick"
        md_path = out_dir / "benchmarks.md"
    elif args.out is None:
        out_dir, md_path = _ROOT / "benchmarks" / "results", _ROOT / "docs" / "benchmarks.md"
    else:
        out_dir, md_path = args.out, args.out / "benchmarks.md"
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / ("papers_quick.json" if args.quick else "papers.json")
    if args.combine:
        parts = [json.loads(Path(f).read_text()) for f in args.combine]
        results = parts[0]
        for nxt in parts[1:]:
            results = _merge(results, nxt)
        # infrastructure facts are re-read now (same machine); the parts may be partial checkpoints
        full = next((p_["meta"] for p_ in parts if "machine" in p_.get("meta", {})), None)
        cfg = dict(DEFAULTS)
        results["meta"] = (
            dict(full)
            if full
            else _meta(
                argparse.Namespace(seed=0, experiments=list(_EXPERIMENTS)),
                False,
                None,
                P.RATIOS,
                (),
                (),
                cfg,
                time.time(),
            )
        )
        results["meta"]["date_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        results["meta"]["partial_parts"] = [
            str(f) for f, p_ in zip(args.combine, parts) if p_.get("meta", {}).get("partial")
        ]
        results["meta"]["commands"] = [p_.get("meta", {}).get("command") for p_ in parts]
        # each part ran at its own commit (partial checkpoints record none); the combination is made now
        results["meta"]["git_commits"] = [p_.get("meta", {}).get("git_commit") for p_ in parts]
        results["meta"]["git_commit"] = _git_commit()
        results["meta"]["seconds"] = sum(p_.get("meta", {}).get("seconds", 0.0) for p_ in parts)
        results["meta"]["methods"] = sorted(
            {m for p_ in parts for m in p_.get("meta", {}).get("methods", [])}
        )
        results["meta"]["datasets"] = sorted(
            {m for p_ in parts for m in p_.get("meta", {}).get("datasets", [])}
        )
        results["meta"]["command"] = "python -m benchmarks.papers.run --combine " + " ".join(
            map(str, args.combine)
        )
        json_path.write_text(json.dumps(results, indent=1, default=_default))
        if not args.no_report:
            from .report import write_report

            write_report(results, out_dir, md_path, json_path=json_path)
            print(f"report: {md_path}", file=sys.stderr)
        return 0
    old = json.loads(json_path.read_text()) if args.merge and json_path.exists() else None

    def save(res):
        res = dict(res)
        res.setdefault(
            "meta",
            {
                "command": _command(),
                "experiments": list(args.experiments),
                "partial": True,
            },
        )
        if old is not None:
            res = _merge(old, res)
        _write_atomic(json_path, json.dumps(res, indent=1, default=_default))
        return res

    learning_checkpoint = out_dir / (
        "learning_checkpoint_quick.json" if args.quick else "learning_checkpoint.json"
    )
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        if args.resume and "learning" in args.experiments:
            _learning_state(args, args.quick, learning_checkpoint)  # a bad checkpoint fails before any work
        results = run_suite(
            args, progress_factory=_progress, checkpoint=save, learning_checkpoint=learning_checkpoint
        )
    except (D.DataNotFoundError, CheckpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)
    results = save(results)
    learning_checkpoint.unlink(missing_ok=True)  # the finished run's tasks are in the results now
    print(f"results: {json_path}", file=sys.stderr)
    if not args.no_report:
        from .report import write_report

        write_report(results, out_dir, md_path, json_path=json_path)
        print(f"report: {md_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Markdown page and plots from the paper-suite results JSON (generated; do not edit by hand).

``python -m benchmarks.papers.report [results.json] [--md docs/benchmarks.md]`` regenerates the
page from an existing JSON without rerunning anything.
"""

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from .learning import report_section as learning_section
from .protocol import METHODS, PUBLISHED, REFERENCE_MODELS

__all__ = ["write_report", "plot_approximation", "findings", "main"]

_ROOT = Path(__file__).resolve().parents[2]
_UNBIASED = ("gorf", "orf_neyman", "orf", "rff", "gorf_terms", "gorf_paper_dirs", "rbf_sampler")


_NOTES = (
    "**delta-Gaussian `paper_*` rows.** The GORF code's Gaussian-specific generators "
    "(`gen_GRFF_gaussian.m`, `gen_GORF_gaussian_mix.m`) are not in its public repository. Our `paper_*` rows apply "
    "the published generic recipe (`signedmeasure.m`: |mu±| tabulated on [0, 100] without rho^(d-1), masses "
    "normalised to c+ + c− = 1) to the paper's eq. (20). In d ≥ 16 that recipe gives c− ≈ 1 and K̂ ≈ −1 everywhere, "
    "hence flat errors (≈ 7.5 on letter, 3.4 on ijcnn1, 1.4 on usps): it is *not* what produced Table II's delta-Gaussian rows, which are consistent with "
    "an unbiased estimator (our ORF reaches the same values). For the spherical polynomial the reproduction is "
    "faithful: E K̂(z = 2) = 0.699 instead of k(2) = 0.556 in d = 16 (docs/theory.md §7; asserted in the tests), so its "
    "error plateaus.",
    "**Why ORF beats GORF on the delta-Gaussian.** The − part (the σ = 10 Gaussian, frequencies ~0.1) is almost "
    "deterministic on data with distances ≤ 2: cos(v·z) ≈ 1. Making + and − directions jointly orthogonal (GORF) "
    "spends half of every orthogonal block on that part, so the + part gets half-size blocks and less variance "
    "reduction; separate blocks (ORF) do better. Neyman allocation (`orf_neyman`) goes further and gives ~99 % of "
    "the 2s frequencies to the + part (σ+ ≈ 0.15 vs σ− ≈ 0.002 on letter), at the same width 4s and still unbiased.",
    "**Spherical polynomial.** Its zero extension beyond r = 2 has infinite total mass in every d for (a=3, p=1) and "
    "for d ≥ 5 for (a=2, p=2) (check_rkks: DIVERGENT), so no unbiased stationary random features exist for it and "
    "the published errors are those of a biased estimator. The finite-mass C^m extension (identical on the sphere) "
    "is unbiased but its mass is ~10^4 ((a=3, p=1)) to ~10^5 ((a=2, p=2)) in d = 16 (the Hermite join needs m = 7 derivatives), so its error is orders "
    "of magnitude larger; in d = 256 (usps) no such extension is computable (m = 127). (a=3, p=1) is moreover the PD "
    "rank-(d+1) kernel α(q + <x, y>) on the sphere, where Nystroem is exact.",
    "**Data spread on the sphere.** Min-max scaling to [0, 1] before l2-normalisation puts every row in the positive "
    "orthant, so chord distances are ≤ √2 and mostly small; the papers' preprocessed `.mat` files are not available "
    "(their polynomial errors are larger than our run of their own recipe, consistent with data spread over more of "
    "the sphere). The delta-Gaussian comparison is the meaningful one: it has a finite mass in every d, and there "
    "the unbiased `orf_neyman` is below the published GORF at every s on letter, ijcnn1 and usps.",
    "**Measured masses of the extension** (check_rkks, letter d = 16, (a=3, p=1), C^7 join): L = 1: m± ≈ 2.06e5 each; "
    "L = 2: m+ = 4789.8 ± 2.0, m− = 4788.8 ± 2.0 (k(0) − (m+ − m−) = −0.032, within the mass errors); L = 4: "
    "m± ≈ 2.04e4 each. With masses ~5e3 the standard deviation of one estimated Gram entry at s = 8d is "
    "up to ≈ 5e3·√(2/128) ≈ 600 against |k| ≤ 1: finite-mass and unbiased, but useless — measured relative "
    "errors (letter, 2 repetitions, the orf/gorf cells of the letter (a=3, p=1) table) are ≈ 1.2e3 at s = d and "
    "≈ 4.2e2 at s = 8d, falling like 1/√s as an unbiased estimator must. One RandomFeatures fit on this measure "
    "(627 sign lobes) took 1–13 minutes on the loaded machine, so the extension was run on letter only. "
    "(a=2, p=2) on letter (same C^7 join, L = 2): m+ = 123643 ± 72, m− = 123643 ± 73, i.e. 26 times the (3, 1) "
    "masses; relative errors ≈ 3.4e4 at s = d and ≈ 1.2e4 at s = 8d (2 repetitions; ratio 2.86 ≈ √8, the 1/√s "
    "of an unbiased estimator), about 60 s per fit on the idle machine.",
    "**Metric.** Published errors were computed after overwriting diag(K̂) with k(0) (docs/theory.md §7). For the unbiased "
    "sin/cos estimators that is a no-op (K̂(x, x) = m+ − m− = k(0) exactly); for the biased recipe it hides its wrong "
    "k̂(0). Both metrics are in the tables.",
    "**Housing: why the published delta-Gaussian RMSE (3.164 at s = 8d) is not beaten.** The exact kernel — the "
    "limit every unbiased estimator converges to — gives 3.548 ± 0.562 with kernel ridge on the same 10 splits "
    "(3.661 with ε-SVR, the papers' loss; 3.553 with K+ + K−; 3.496 with |K|), and our best unbiased features reach "
    "3.583 at s = 8d, +0.036 ± 0.054 above the exact kernel on the same splits (paired): the estimator has converged, "
    "and the remaining gap is the model and protocol (their splits, preprocessing and liblinear SVR), not the "
    "estimator. The gap is also within noise: with a split-to-split std ≈ 0.5, two 10-split means differ by 0.38 "
    "at 1.7 standard errors. The splits matter as much: on our splits 0–4 the exact kernel gives 3.467, on 5–9 "
    "3.628 (the earlier 5-repetition run, λ ∈ [1e-3, 1], had orf_neyman at 3.727 / 3.591 / 3.443; on the same "
    "splits 0–4 with the wider λ grid it is 3.719 / 3.637 / 3.480). The wider λ grid (1e-6 … 10) was needed: "
    "the exact kernel picks λ ∈ [1e-4, 1e-2], partly below the first grid's edge 1e-3. For the spherical "
    "polynomial the exact kernel (the rank-14 kernel (7 + 2⟨x, y⟩)/9 on the sphere, i.e. linear ridge) gives 4.54, "
    "and the published 3.472 is 1.07 below it, while the papers' own biased features reach 3.55 with plain ridge: "
    "those numbers belong to the kernel their biased frequencies define, not to the polynomial kernel.",
    "**Timing.** The box was shared with other jobs (load average 6–17 on 2 cores during the first runs; later "
    "parts ran niced beside the lead's benchmarks, and one part was paused by them for minutes); times in the JSON "
    "are wall-clock and only indicative.",
)


def _fmt(mean, std, digits=4):
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _ratio_label(r):
    return {0.25: "1/4", 0.5: "1/2"}.get(r, f"{r:g}")


def plot_approximation(records, dataset, kernel, label, path):
    """Error vs s/d (log-log, mean ± std) for every method; published GORF/GRFF dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for method in METHODS:
        rows = sorted((r for r in records if r["method"] == method and "mean" in r), key=lambda r: r["ratio"])
        if not rows:
            continue
        x = [r["ratio"] for r in rows]
        ax.errorbar(
            x,
            [r["mean"] for r in rows],
            yerr=[r["std"] for r in rows],
            marker="o",
            ms=3,
            capsize=2,
            label=method,
            ls="-" if method in _UNBIASED else ":",
        )
    pub = PUBLISHED["approximation"].get((kernel, dataset))
    if pub:
        for name, vals in pub.items():
            xs = sorted(vals)
            ax.plot(
                xs,
                [vals[v][0] for v in xs],
                "k--" if name == "GORF" else "k:",
                marker="x",
                label=f"published {name}",
            )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("s / d (frequencies per part / input dimension)")
    ax.set_ylabel("||K - K^||_F / ||K||_F")
    ax.set_title(f"{dataset}: {label}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _approx_table(recs, ratios):
    n_max = max((len(r.get("errors", [])) for r in recs), default=0)
    lines = [
        "| method | " + " | ".join(f"s/d={_ratio_label(r)}" for r in ratios) + " | paper metric at max s |",
        "|---|" + "---|" * (len(ratios) + 1),
    ]
    best = {}
    for r in ratios:
        vals = [x["mean"] for x in recs if x["ratio"] == r and "mean" in x]
        best[r] = min(vals) if vals else None
    for method in METHODS:
        rows = {x["ratio"]: x for x in recs if x["method"] == method}
        if not rows:
            continue
        if all("skipped" in x for x in rows.values()):
            reason = next(iter(rows.values()))["skipped"]
            lines.append(f"| {method} | " + " | ".join("—" for _ in ratios) + f" | not run: {reason[:90]} |")
            continue
        cells = []
        for r in ratios:
            x = rows.get(r)
            if x is None or "mean" not in x:
                cells.append("—")
                continue
            c = _fmt(x["mean"], x["std"])
            cells.append(f"**{c}**" if best[r] is not None and x["mean"] == best[r] else c)
        last = max((x for x in rows.values() if "mean" in x), key=lambda x: x["ratio"], default=None)
        pm = f"{last['paper_metric_mean']:.4f}" if last else "—"
        ns = sorted({len(x["errors"]) for x in rows.values() if "mean" in x})
        label = method if ns == [n_max] else f"{method} (n = {', '.join(map(str, ns))})"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {pm} |")
    return lines


def _published_comparison(approx):
    lines = ["| kernel | dataset | row | s/d=1/2 | s/d=1 | s/d=2 | s/d=8 |", "|---|---|---|---|---|---|---|"]
    verdicts = []
    for (kernel, dataset), pub in PUBLISHED["approximation"].items():
        recs = [r for r in approx if r["kernel"] == kernel and r["dataset"] == dataset]
        if not recs:
            continue
        for name, vals in pub.items():
            lines.append(
                f"| {kernel} | {dataset} | published {name} | "
                + " | ".join(_fmt(*vals[v]) for v in (0.5, 1, 2, 8))
                + " |"
            )
        for method in (
            "paper_gorf",
            "gorf",
            "orf_neyman",
            "orf",
            "rff",
            "gorf_terms",
            "gorf_paper_dirs",
            "rbf_sampler",
            "nystroem",
        ):
            rows = {r["ratio"]: r for r in recs if r["method"] == method and "mean" in r}
            if not rows:
                continue
            cells = []
            for v in (0.5, 1, 2, 8):
                x = rows.get(float(v))
                if x is None:
                    cells.append("—")
                    continue
                beat = x["mean"] < pub["GORF"][v][0]
                cells.append(_fmt(x["mean"], x["std"]) + (" ✓" if beat else ""))
                if method in _UNBIASED:
                    verdicts.append((kernel, dataset, method, v, beat))
            lines.append(f"| {kernel} | {dataset} | ours: {method} | " + " | ".join(cells) + " |")
    return lines, verdicts


def _rec(approx, dataset, kernel, method, ratio):
    for r in approx:
        if (r["dataset"], r["kernel"], r["method"], r["ratio"]) == (
            dataset,
            kernel,
            method,
            ratio,
        ) and "mean" in r:
            return r
    return None


def _c_grids(results, meta):
    """The LinearSVC C grid(s) the classification records were run with (older records: the run's)."""
    grids = sorted(
        {
            tuple(c.get("C_grid") or meta.get("svm", {}).get("C_grid") or ())
            for c in results.get("classification", [])
        },
        key=len,
    )
    return " / ".join(str(list(g)) for g in grids if g) or str(meta.get("svm", {}).get("C_grid"))


def _paired(ours, ref):
    """Mean and standard error of ``ours - ref`` over the splits both were run on (or None)."""
    a = dict(zip(ours.get("splits", []), ours["values"]))
    b = dict(zip(ref.get("splits", []), ref["rmse"]))
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        return None
    d = np.array([a[i] - b[i] for i in common])
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))), len(d)


def _housing_section(reg, ref):
    """Housing table: published, exact-kernel reference, random features; then paired differences."""
    mults = (2.0, 4.0, 8.0)
    L = ["## Housing regression (test RMSE, mean ± std over seeded 405/101 splits)", ""]
    grids = sorted({tuple(r.get("lambda_grid", ())) for r in reg})
    L += [
        f"λ grid(s) of the random-feature rows: {', '.join(str(list(g)) if g else 'the first grid [0.001, 0.01, 0.1, 1.0] (not recorded)' for g in grids)}. "
        "The exact-kernel rows (n = 405, exact Gram) are what the random-feature rows converge to as s → ∞: "
        + "; ".join(f"`{k}`: {v}" for k, v in REFERENCE_MODELS.items())
        + ".",
        "",
        "| kernel | method | model | n | s=2d | s=4d | s=8d |",
        "|---|---|---|---|---|---|---|",
    ]
    refk = defaultdict(dict)
    for r in ref:
        refk[r["kernel"]][r["model"]] = r
    byk = defaultdict(dict)
    for r in reg:
        byk[(r["kernel"], r["method"])][r["ratio"]] = r
    kernels_ = [k for k in PUBLISHED["regression"] if any(r["kernel"] == k for r in reg)]
    for kernel in kernels_:
        pub = PUBLISHED["regression"][kernel]
        L.append(
            f"| {kernel} | published GORF | liblinear SVR | 10 | "
            + " | ".join(_fmt(*pub[int(m)], digits=3) for m in mults)
            + " |"
        )
        for model, r in refk.get(kernel, {}).items():
            if "mean" not in r:
                L.append(
                    f"| {kernel} | **exact kernel** | {model} | — | not run: {r.get('skipped', '?')[:80]} | | |"
                )
                continue
            cell = _fmt(r["mean"], r["std"], digits=3)
            extra = f" (on {r['svr_gram']})" if model == "svr" and r.get("svr_gram") else ""
            L.append(
                f"| {kernel} | **exact kernel** | {model}{extra} | {len(r['rmse'])} | {cell} | {cell} | {cell} |"
            )
        for (k2, method), rows in byk.items():
            if k2 != kernel:
                continue
            if all("skipped" in x for x in rows.values()):
                L.append(
                    f"| {kernel} | {method} | — | — | not run: {next(iter(rows.values()))['skipped'][:80]} | | |"
                )
                continue
            for model in ("krein", "ridge"):
                cells = [
                    (
                        _fmt(rows[m][f"mean_{model}"], rows[m][f"std_{model}"], digits=3)
                        if m in rows and f"mean_{model}" in rows[m]
                        else "—"
                    )
                    for m in mults
                ]
                n = max(len(rows[m][f"rmse_{model}"]) for m in rows if f"rmse_{model}" in rows[m])
                L.append(
                    f"| {kernel} | {method} | {'Krein ridge' if model == 'krein' else 'ridge'} | {n} | "
                    + " | ".join(cells)
                    + " |"
                )
    L.append("")
    # paired differences on the same splits: far tighter than comparing means across split draws
    rows_p = []
    for (kernel, method), rows in byk.items():
        for model, refm in (("krein", "krein"), ("ridge", "pd")):
            rr = refk.get(kernel, {}).get(refm) or (refk.get(kernel, {}).get("abs") if refm == "pd" else None)
            if not rr or "mean" not in rr:
                continue
            cells = []
            for m in mults:
                r = rows.get(m)
                pr = (
                    _paired({"splits": r.get("splits", []), "values": r.get(f"rmse_{model}", [])}, rr)
                    if r
                    else None
                )
                cells.append("—" if pr is None else f"{pr[0]:+.3f} ± {pr[1]:.3f} (n={pr[2]})")
            if any(c != "—" for c in cells):
                rows_p.append(
                    f"| {kernel} | {method} | {'Krein ridge' if model == 'krein' else 'ridge'} − exact "
                    f"{rr['model']} | " + " | ".join(cells) + " |"
                )
    if rows_p:
        L += [
            "Paired on the same splits: RMSE(random features) − RMSE(exact kernel), mean ± standard error over "
            "the splits both were run on. The split-to-split spread (std ≈ 0.5) cancels here, so these "
            "differences are far more precise than a comparison of means across different split draws. An "
            "unbiased estimator's difference shrinks towards 0 as s grows; a biased one's does not. Runs older "
            "than this split bookkeeping have no split list and show —.",
            "",
            "| kernel | method | difference | s=2d | s=4d | s=8d |",
            "|---|---|---|---|---|---|",
            *rows_p,
            "",
        ]
    return L


def _classification_findings(results):
    """SVM: the best unbiased spectralkit features against the papers' recipe and Nystroem."""
    out = []
    cls = [c for c in results.get("classification", []) if "mean" in c]
    for dataset in sorted({c["dataset"] for c in cls}):
        parts = []
        for ratio in sorted({c["ratio"] for c in cls if c["dataset"] == dataset}):
            here = {c["method"]: c for c in cls if c["dataset"] == dataset and c["ratio"] == ratio}
            ours = [c for m, c in here.items() if m in _UNBIASED]
            if not ours:
                continue
            b = max(ours, key=lambda c: c["mean"])
            txt = f"s/d={_ratio_label(ratio)}: {b['method']} {b['mean']:.4f} (n={len(b['accuracy'])})"
            for m in ("paper_gorf", "nystroem"):
                if m in here:
                    txt += f", {m} {here[m]['mean']:.4f} (n={len(here[m]['accuracy'])})"
            parts.append(txt)
        if parts:
            out.append(
                f"SVM test accuracy on {dataset} (delta-Gaussian features): "
                + "; ".join(parts)
                + ". Nystroem's |K| features are PD and classify well; accuracy does not need an unbiased "
                "Gram estimate, but the papers' biased features lose accuracy where their k̂ is far from k."
            )
    return out


def _housing_findings(results):
    """Housing: the exact kernel's RMSE against the published GORF and our best random features."""
    out = []
    reg, ref = results.get("regression", []), results.get("regression_reference", [])
    for kernel, pub in PUBLISHED["regression"].items():
        ex = next((r for r in ref if r["kernel"] == kernel and r["model"] == "krein" and "mean" in r), None)
        if ex is None:
            continue
        n_ex = len(ex["rmse"])
        txt = (
            f"housing, {kernel}: the exact kernel (Krein ridge = kernel ridge with K, λ by CV) has test RMSE "
            f"{ex['mean']:.3f} ± {ex['std']:.3f} over {n_ex} splits"
        )
        others = [r for r in ref if r["kernel"] == kernel and r["model"] != "krein" and "mean" in r]
        if others:
            txt += " (" + ", ".join(f"{r['model']} {r['mean']:.3f}" for r in others) + ")"
        p8 = pub[8]
        se = float(np.sqrt(ex["std"] ** 2 / n_ex + p8[1] ** 2 / 10))
        txt += (
            f"; the published GORF at s = 8d, {p8[0]:.3f} ± {p8[1]:.3f}, is {abs(ex['mean'] - p8[0]):.3f} "
            f"{'below' if p8[0] < ex['mean'] else 'above'} it ({abs(ex['mean'] - p8[0]) / se:.1f} standard errors of "
            "the difference of two 10-split means)"
        )
        best = [
            r for r in reg if r["kernel"] == kernel and r.get("method") in _UNBIASED and "mean_krein" in r
        ]
        if best:
            b = min(best, key=lambda r: r["mean_krein"])
            txt += (
                f"; our best unbiased random features reach {b['mean_krein']:.3f} ({b['method']}, Krein ridge, "
                f"s = {b['ratio']:g}d, n = {len(b['rmse_krein'])})"
            )
        pg = next(
            (
                r
                for r in reg
                if r["kernel"] == kernel
                and r.get("method") == "paper_gorf"
                and r.get("ratio") == 8.0
                and "mean_ridge" in r
            ),
            None,
        )
        different = pg is not None and pg["mean_ridge"] < ex["mean"] - 0.2
        if different:
            txt += (
                f"; the papers' own (biased) features with plain ridge reach {pg['mean_ridge']:.3f} at s = 8d, "
                f"below the exact kernel: their frequencies define a *different* kernel (docs/theory.md §7), so the "
                f"published {kernel} numbers are not this kernel's"
            )
        if p8[0] < ex["mean"]:
            txt += (
                ". An unbiased estimator converges to the exact kernel, so it cannot be expected below that line: "
                + (
                    "the published number belongs to the kernel of the papers' biased frequencies"
                    if different
                    else "the remaining gap to the published number is the model and protocol (liblinear SVR on their "
                    "splits and preprocessing) and the split-to-split noise, not the estimator"
                )
            )
        out.append(txt + ".")
    return out


def findings(results):
    """Plain-language statements derived from the results (each cites its numbers)."""
    approx = results.get("approximation", [])
    out = []
    spectral = ("gorf", "orf_neyman", "orf", "rff", "gorf_terms", "gorf_paper_dirs")
    for (kernel, dataset), pub in PUBLISHED["approximation"].items():
        wins, total, detail = 0, 0, []
        for v in (0.5, 1, 2, 8):
            cands = [_rec(approx, dataset, kernel, m, float(v)) for m in spectral]
            cands = [c for c in cands if c is not None]
            if not cands:
                continue
            best = min(cands, key=lambda c: c["mean"])
            total += 1
            wins += best["mean"] < pub["GORF"][v][0]
            detail.append(
                f"s/d={_ratio_label(v)}: {best['method']} {best['mean']:.4f} vs {pub['GORF'][v][0]:.4f}"
            )
        if total:
            out.append(
                f"{kernel} on {dataset}: the best spectralkit estimator is below the published GORF error at "
                f"{wins} of {total} s values ({'; '.join(detail)})."
            )
        rp = [_rec(approx, dataset, kernel, "paper_gorf", float(v)) for v in (0.5, 8)]
        if all(rp):
            out.append(
                f"{kernel} on {dataset}: our run of the papers' (biased) recipe gives {rp[0]['mean']:.4f} at "
                f"s/d=1/2 and {rp[1]['mean']:.4f} at s/d=8 (published GORF {pub['GORF'][0.5][0]:.4f} / "
                f"{pub['GORF'][8][0]:.4f}); a biased estimator's error stops falling at its bias."
            )
    for kernel in ("delta_gaussian", "delta_gaussian_box"):
        ny = [r for r in approx if r["kernel"] == kernel and r["method"] == "nystroem" and "mean" in r]
        if ny:
            worst = min(r["mean"] for r in ny)
            out.append(
                f"scikit-learn Nystroem on the indefinite {kernel}: relative error ≥ {worst:.2f} at every s and "
                "dataset — it approximates |K| (singular values), not K, so more landmarks do not help."
            )
    ny = [r for r in approx if r["kernel"] == "sph_poly_3_1" and r["method"] == "nystroem" and "mean" in r]
    if ny:
        out.append(
            f"spherical polynomial (a=3, p=1) on the sphere is the PD rank-(d+1) kernel α(q + <x, y>): "
            f"Nystroem with 4s ≥ d + 1 landmarks is exact up to the conditioning of the landmark Gram (median "
            f"error {float(np.median([r['mean'] for r in ny])):.1e}, worst {max(r['mean'] for r in ny):.1e}); "
            "it is not an indefinite test case (docs/theory.md §7)."
        )
    rb = [
        (r, _rec(approx, r["dataset"], r["kernel"], "rff", r["ratio"]))
        for r in approx
        if r["method"] == "rbf_sampler" and "mean" in r
    ]
    rb = [(a, b) for a, b in rb if b is not None]
    if rb:
        worse = sum(a["mean"] > b["mean"] for a, b in rb)
        out.append(
            f"RBFSampler (random-offset cosines, coefficient split) is worse than spectralkit's sin/cos RFF in "
            f"{worse} of {len(rb)} settings: the offset features carry O(1) variance even at z = 0, where the "
            "sin/cos pair is exact."
        )
    out += _classification_findings(results)
    out += _housing_findings(results)
    for k in results.get("kernels", []):
        rk, rs = k.get("rkks", {}), k.get("rkks_sampled")
        if rk.get("verdict") == "DIVERGENT":
            txt = f"{k['label']} in d = {k['dim']} ({k['dataset']}): zero extension DIVERGENT (check_rkks)"
            if rs and rs.get("mass_plus"):
                txt += (
                    f"; the C^m extension {k['sampled_name']} is {rs.get('verdict')} with m+ = "
                    f"{rs['mass_plus']['value']:.4g}, m− = {rs['mass_minus']['value']:.4g}, and is sampled instead"
                )
            elif "note" in k and k["note"]:
                txt += f"; {k['note']}"
            out.append(txt + ".")
    return out


def write_report(results, out_dir, md_path, json_path=None):
    """Write the PNG plots into ``out_dir`` and the markdown page to ``md_path``."""
    out_dir, md_path = Path(out_dir), Path(md_path)
    md_path.parent.mkdir(parents=True, exist_ok=True)
    meta = results.get("meta", {})
    prefix = "papers_quick_" if meta.get("quick") else "papers_"
    approx = results.get("approximation", [])
    L = [
        "# Paper benchmarks: indefinite-kernel random features on the papers' datasets",
        "",
        "*Generated by `benchmarks/papers/report.py` from "
        f"`{os.path.relpath(json_path, md_path.parent) if json_path else 'the results JSON'}` — do not edit by hand.*",
        "",
    ]
    L += [
        "## How this was run",
        "",
        f"- Command: `{meta.get('command', '?')}`"
        + (f" (merged with `{meta['merged_from']}`)" if meta.get("merged_from") else ""),
        *([f"  - part: `{c}`" for c in meta["commands"]] if meta.get("commands") else []),
        *(
            [
                f"  - **stopped at the time limit** (only its completed (dataset, kernel) blocks are here): "
                f"{', '.join(f'`{x}`' for x in meta['partial_parts'])}"
            ]
            if meta.get("partial_parts")
            else []
        ),
        f"- Date (UTC): {meta.get('date_utc')}, wall time {meta.get('seconds', 0):.0f} s, git `{meta.get('git_commit')}`"
        + (
            f" (parts' commits, in order: {', '.join(f'`{c}`' if c else 'not recorded' for c in meta['git_commits'])})"
            if meta.get("git_commits")
            else ""
        ),
        f"- Machine: {meta.get('machine', {}).get('cpu')} ({meta.get('machine', {}).get('logical_cpus')} logical CPUs), "
        f"{meta.get('machine', {}).get('platform')}",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()),
        f"- Seed {meta.get('seed')}; every (experiment, dataset, kernel, method, s, repetition) draws from "
        "`SeedSequence([seed, hash(labels)])`, so any subset reruns identically.",
        "- spectralkit modules at run time: "
        + ", ".join(f"`{k}`: {v}" for k, v in meta.get("spectralkit_modules", {}).items()),
        "- Rerun everything: `python -m benchmarks.papers.run` (add `--quick` for the 30-second smoke run; "
        "`python -m benchmarks.papers.report` rebuilds this page from the JSON). The kernel-learning "
        "tables (hours) run on their own: `python -m benchmarks.papers.run --experiments learning --merge "
        "--jobs 2` (one process per core; `--resume` continues an interrupted run from its checkpoint, "
        "which is validated and bound to the run's settings and git commit).",
        "",
    ]
    L += [
        "## Protocol",
        "",
        f"- Kernel approximation (docs/theory.md §8): relative Frobenius error ||K − K̂||_F/||K||_F on 1000 random "
        f"training points, mean ± sample std over repetitions, s/d ∈ "
        f"{{{', '.join(_ratio_label(r) for r in meta.get('ratios', []))}}} with s = round(ratio·d). "
        + (
            f"Repetitions: {meta.get('reps')} (quick/explicit run)."
            if meta.get("quick") or not meta.get("plan", {}).get("table_reps")
            else "Repetitions: each table states its n (this page combines parts run with different "
            "`--reps`; see the commands above)."
            if meta.get("commands")
            else f"Planned repetitions (cut by the time limit where a table shows a smaller n): the Table II kernels "
            f"{meta['plan']['table_kernels']} get {meta['plan']['table_reps']} (usps only at Table II's s/d "
            f"{meta['plan']['usps_ratios']}); the other kernels {meta['plan']['extra_reps']} repetitions on "
            f"{meta['plan']['extra_datasets']} only (not run on usps). Each table states n."
        ),
        "- **s counts frequencies per part**, as in the papers: an indefinite estimator has s frequencies for "
        "μ+ and s for μ−, i.e. 4s real features [cos | sin]. Every method gets the same width "
        "`n_components = 4 s`: spectralkit `RandomFeatures(n_components=4s)` (it splits its 2s frequencies "
        "between the parts itself — the masses and counts are in the JSON), PD kernels 2s frequencies, "
        "Nystroem 4s landmarks (capped at 512: its SVD is cubic and the shared 2-core box was loaded), RBFSampler 4s cosines.",
        "- The headline error is honest: the papers' code overwrote diag(K̂) with k(0) before measuring "
        "(docs/theory.md §7); that variant is in the column *paper metric* (it hides the wrong k̂(0) of the biased "
        "estimator).",
        "- Preprocessing: features min-max scaled to [0, 1] with the training range; the spherical kernels use "
        "l2-normalised rows. The papers' code l2-normalises rows for **every** kernel, so `delta_gaussian` is "
        "run on l2 rows (the published protocol) and `delta_gaussian_box` on the [0,1] box (the papers' text).",
        "- Matérn 3/2 and exponential power 1.5 use the lengthscale l = median pairwise distance of 1000 seeded "
        "training points (2 significant digits).",
        f"- Classification: LinearSVC on [Φ+ | Φ−] (the features of k+ + k−; docs/theory.md §2), C from the grid "
        f"{_c_grids(results, meta)} by 3-fold CV on ≤ 2000 training points; training set subsampled to "
        f"≤ {meta.get('svm', {}).get('train_max')} rows, seeded per repetition (letter has 12000, ijcnn1 49990, usps 7291: **subsampled** for time), full test sets; "
        f"s/d ∈ {meta.get('svm', {}).get('ratios')}, repetitions as in the table's column (std over repetitions; 0 with one), methods "
        f"{meta.get('svm', {}).get('methods')} (SVM fits cost ~100x an approximation task)"
        + "".join(
            f"; not on {ds}: {', '.join(ms)} (liblinear takes ~14 min per fit on the papers' unnormalised features)"
            for ds, ms in (meta.get("svm", {}).get("excluded") or {}).items()
        )
        + ". The papers used liblinear with C = 1000 on complex features.",
        "- Housing: Krein ridge (indefinite Gram Φ J Φᵀ, docs/theory.md §2) and plain ridge on [Φ+ | Φ−], λ by "
        "5-fold CV (grid in the housing section); intercept = training mean; one seeded 405/101 split per "
        "repetition; l2-normalised rows as the papers' code. The papers used liblinear SVR. The solver is the "
        "suite's `baselines.krein_ridge` (tested against the kernel form K̂(x, X)(K̂ + λI)⁻¹y), not "
        "`spectralkit.sklearn.KreinRidgeRegressor`: the class solves the same system (Φ^TΦ + λJ) coef = Φ^T y but "
        "builds its own features (orf/gorf/rff), while the suite feeds one solver the feature maps of every method "
        "(Neyman-allocated ORF, the papers' code, Nystroem, RBFSampler) so that only the features differ. "
        "An exact-kernel reference on the same splits (n = 405: exact Grams) shows what these models converge to.",
        "",
    ]
    L += ["## Methods", ""] + [f"- `{k}`: {v}" for k, v in METHODS.items()] + [""]

    # kernels, verdicts, masses
    L += [
        "## Kernels, RKKS verdicts and masses (`spectralkit.measures.check_rkks`)",
        "",
        "| dataset | kernel | d | verdict | m+ | m− | papers' code c+ / c− | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    paper_masses = {}
    for r in approx:
        if r["method"] == "paper_grff" and "info" in r:
            paper_masses[(r["dataset"], r["kernel"])] = r["info"]

    def _m(x):
        return "—" if not x else format(x["value"], ".10g") + " ± " + format(x["error"], ".1g")

    for k in results.get("kernels", []):
        rk = k.get("rkks", {})
        pm = paper_masses.get((k["dataset"], k["kernel"]))
        L.append(
            f"| {k['dataset']} | {k['label']} | {k['dim']} | {rk.get('verdict')} | "
            f"{_m(rk.get('mass_plus'))} | {_m(rk.get('mass_minus'))} | "
            f"{'—' if not pm else format(pm['mass_plus'], '.3g') + ' / ' + format(pm['mass_minus'], '.3g')} | "
            f"{(rk.get('reason') or '')[:160]} {k.get('note', '')} |"
        )
        if "rkks_sampled" in k:
            rs = k["rkks_sampled"]
            L.append(
                f"| {k['dataset']} | ↳ sampled instead: {k['sampled_name']} | {k['dim']} | {rs.get('verdict')} | "
                f"{_m(rs.get('mass_plus'))} | {_m(rs.get('mass_minus'))} | — | {(rs.get('reason') or '')[:160]} |"
            )
    L.append("")
    ext = [k for k in results.get("kernels", []) if "sampled_formula" in k]
    if ext:
        L += [
            "Smooth extensions of the spherical polynomial (exactly (1 − r²/a²)^p on [0, 2], a C^m Hermite "
            "polynomial join on [2, 2 + L] vanishing to order m + 1 at 2 + L, m the smallest order with "
            "d < 2m + 3; L = 2: in d = 16 the total masses for L = 1, 2, 4 were 4.1e5, 9.6e3 and 4.1e4 (`best_extension` can try several L; only L = 2 was run here for time)):",
            "",
        ]
        for k in ext:
            L.append(
                f"- {k['dataset']} (d = {k['dim']}), {k['label']}: support {k['sampled_support']:g}, "
                f"`{k['sampled_formula'][:400]}`"
            )
        L.append("")

    # approximation tables and plots
    L += ["## Kernel approximation", ""]
    groups = defaultdict(list)
    for r in approx:
        groups[(r["dataset"], r["kernel"])].append(r)
    labels = {(k["dataset"], k["kernel"]): k["label"] for k in results.get("kernels", [])}
    for (dataset, kernel), recs in groups.items():
        ratios = sorted({r["ratio"] for r in recs})
        label = labels.get((dataset, kernel), kernel)
        png = out_dir / f"{prefix}{dataset}_{kernel}.png"
        try:
            plot_approximation(recs, dataset, kernel, label, png)
            img = f"![{dataset} {kernel}]({os.path.relpath(png, md_path.parent)})"
        except ImportError:
            img = "*(matplotlib not installed: no plot)*"
        nrep = max((len(r.get("errors", [])) for r in recs), default=0)
        dim = next((k["dim"] for k in results.get("kernels", []) if k["dataset"] == dataset), "?")
        L += (
            [f"### {dataset} (d = {dim}): {label} — n = {nrep} repetitions", "", img, ""]
            + _approx_table(recs, ratios)
            + [""]
        )

    lines, verdicts = _published_comparison(approx)
    L += (
        [
            "## Side by side with the published numbers (GORF paper Table II)",
            "",
            "Same protocol as the papers' code: l2-normalised rows, 1000 points, s per part; repetitions as stated in "
            "each dataset's table above (the papers: 10). ✓ = lower mean error than the published GORF at that s — for "
            "the biased `paper_*` rows and for Nystroem on the rank-(d+1) polynomial this is not an unbiasedness claim "
            "(see the notes). Only the unbiased estimators count in the summary below.",
            "",
        ]
        + lines
        + [""]
    )
    if verdicts:
        wins = defaultdict(list)
        for kernel, dataset, method, _v, beat in verdicts:
            wins[(kernel, dataset, method)].append(beat)
        L += ["Summary (unbiased methods vs published GORF, over s/d ∈ {1/2, 1, 2, 8}):", ""]
        for (kernel, dataset, method), b in wins.items():
            L.append(f"- {kernel} / {dataset} / `{method}`: lower at {sum(b)} of {len(b)} s values")
        L.append("")

    # classification
    cls = results.get("classification", [])
    if cls:
        L += [
            "## Classification (LinearSVC on the random features; test accuracy)",
            "",
            "| dataset | kernel | method | "
            + " | ".join(f"s/d={_ratio_label(r)}" for r in sorted({c["ratio"] for c in cls}))
            + " | repetitions | n_train | chosen C |",
            "|---|---|---|" + "---|" * (len({c["ratio"] for c in cls}) + 3),
        ]
        byk = defaultdict(dict)
        for c in cls:
            byk[(c["dataset"], c["kernel"], c["method"])][c["ratio"]] = c
        ratios = sorted({c["ratio"] for c in cls})
        for (dataset, kernel, method), rows in byk.items():
            any_rec = next(iter(rows.values()))
            if all("skipped" in x for x in rows.values()):
                L.append(
                    f"| {dataset} | {kernel} | {method} | "
                    + " | ".join("—" for _ in ratios)
                    + f" | — | — | not run: {any_rec['skipped'][:80]} |"
                )
                continue
            cells = [
                (_fmt(rows[r]["mean"], rows[r]["std"]) if r in rows and "mean" in rows[r] else "—")
                for r in ratios
            ]
            Cs = sorted({C for x in rows.values() for C in x.get("C", [])})
            nrep = sorted({len(x.get("accuracy", [])) for x in rows.values()})
            L.append(
                f"| {dataset} | {kernel} | {method} | "
                + " | ".join(cells)
                + f" | {'/'.join(map(str, nrep))} | {any_rec['n_train']} | {Cs} |"
            )
        L.append("")

    # regression
    reg = results.get("regression", [])
    if reg:
        L += _housing_section(reg, results.get("regression_reference", []))

    L += learning_section(results.get("learning"))

    # what was not run
    skipped = sorted(
        {
            (r["method"], r["skipped"])
            for exp in ("approximation", "classification", "regression")
            for r in results.get(exp, [])
            if "skipped" in r
        }
    )
    if skipped:
        L += ["## Not run (and why)", ""]
        seen = set()
        for method, why in skipped:
            key = (method, why[:120])
            if key not in seen:
                seen.add(key)
                L.append(f"- `{method}`: {why}")
        L.append("")
    L += ["## Findings (generated from the numbers above)", ""] + [f"- {f}" for f in findings(results)] + [""]
    L += [
        "## Notes: where the protocol matches the papers, and where it cannot",
        "",
        *[f"- {n}" for n in _NOTES],
        "",
    ]
    md_path.write_text("\n".join(L) + "\n")
    return md_path


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.papers.report")
    p.add_argument("json", nargs="?", type=Path, default=_ROOT / "benchmarks" / "results" / "papers.json")
    p.add_argument("--md", type=Path, default=_ROOT / "docs" / "benchmarks.md")
    args = p.parse_args(argv)
    if not args.json.is_file():
        print(
            f"error: results file {str(args.json)!r} does not exist; run python -m benchmarks.papers.run",
            file=sys.stderr,
        )
        return 2
    results = json.loads(args.json.read_text())
    write_report(results, args.json.parent, args.md, json_path=args.json)
    print(f"report: {args.md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

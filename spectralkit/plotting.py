"""matplotlib pictures of a signed spectral measure (extra ``plot``).

:func:`plot_measure` draws, for a :class:`~spectralkit.SpectralMeasure` on R^d (or a kernel with
its dimension, or a fitted feature map, whose measure is used):

1. the kernel k(r);
2. the signed density mu(rho) with the positive part mu+ and the negative part mu- shaded and
   the sign changes marked;
3. the radial laws of the frequency norms, p±(rho) = max(±f(rho), 0) / m± with
   f(rho) = S_{d-1} rho^(d-1) mu(rho) (what the samplers draw from);
4. their CDFs F±(rho) (normalised by the measure's masses, so a curve that stays below 1 shows the
   mass beyond the plotted range);
5. the partial total mass M(R) = S_{d-1} int_0^R |mu| rho^(d-1) drho on log axes: it levels off
   at m+ + m- when ||mu|| < inf and keeps growing (a power or log R) when the mass diverges;
6. a text panel with the verdict, masses with their errors, tail exponent, method and reason.

matplotlib is imported only when a function is called, and figures are built without pyplot
(``matplotlib.figure.Figure`` renders with the Agg backend), so nothing changes the user's
global backend.
"""

from __future__ import annotations

import math
import os
import textwrap
from typing import TYPE_CHECKING

import numpy as np

from .exceptions import DivergentMassError, SpectralkitError
from .kernels import DensityKernel, RadialKernel
from .measures import SpectralMeasure

if TYPE_CHECKING:  # annotations only: matplotlib is an optional extra, imported on use
    from matplotlib.figure import Figure

__all__ = ["plot_measure", "save_figure"]

_PLUS, _MINUS, _KERNEL = "#1a9850", "#d73027", "#2c7fb8"


def _figure(figsize):
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'spectralkit[plot]'") from None
    return Figure(figsize=figsize, layout="constrained")


def _scales(measure):
    try:
        scales = [float(t.scale) for _, t in measure.transforms if t.scale and math.isfinite(t.scale)]
    except (AttributeError, TypeError, ValueError, SpectralkitError):  # no transforms (disk cache)
        scales = []
    return (min(scales), max(scales)) if scales else (1.0, 1.0)


def _rho_range(measure, finite, fraction=0.995):
    """Upper end of the rho axis: where ``fraction`` of ||mu|| is reached (finite), else 20 x scale."""
    _, hi_scale = _scales(measure)
    shell_hi = 1.2 * max([r_ for r_, _ in getattr(measure, "shells", ()) or ()] + [0.0])
    if not finite:
        return max(20.0 * hi_scale, shell_hi)
    tail = measure.tail
    lobes = measure.lobes
    hi = tail.rho_c if tail is not None else (lobes[-1].b if lobes else 50.0 * hi_scale)
    grid = np.concatenate([[0.0], np.geomspace(hi * 1e-6, hi, 4000)])
    f = np.abs(measure.radial_density(grid))
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(grid))])
    if cum[-1] <= 0:
        return max(hi, shell_hi)
    return max(float(min(hi, 1.15 * grid[np.searchsorted(cum, fraction * cum[-1])])), shell_hi)


def _draw_shells(ax, shells, values):
    """Sphere shells (and an atom at 0) as stems: a point mass in rho, annotated with its mass."""
    if not shells:
        return
    top = (
        float(np.max(np.abs(values)))
        if values is not None and np.size(values) and np.max(np.abs(values)) > 0
        else max(abs(m) for _, m in shells)
    )
    for radius, mass in shells:
        color = _PLUS if mass > 0 else _MINUS
        height = math.copysign(top, mass)
        ax.vlines(radius, 0.0, height, color=color, lw=2.5)
        ax.plot([radius], [height], marker="^" if mass > 0 else "v", color=color, ms=7)
        where = "atom at 0" if radius == 0 else f"shell rho = {radius:.4g}"
        ax.annotate(
            f"{where}, mass {mass:+.4g}",
            (radius, height),
            fontsize=7,
            color=color,
            xytext=(4, -10 if mass > 0 else 4),
            textcoords="offset points",
        )


def _r_range(kernel, measure):
    if kernel.support is not None:
        return 1.2 * kernel.support
    lo_scale, _ = _scales(measure)
    return 5.0 / lo_scale


def _as_measure(source, dim):
    """The SpectralMeasure to draw: ``source`` itself, its kernel's on R^dim, or a fitted feature
    map's (``measure_``; the scikit-learn and dask wrappers hold the map in ``features_``)."""
    if isinstance(source, SpectralMeasure):
        measure = source
    elif isinstance(source, (RadialKernel, DensityKernel, str)):
        if dim is None:
            raise TypeError(
                "plot_measure(kernel) needs dim=d: the spectral measure of a radial kernel depends on "
                "the dimension"
            )
        return SpectralMeasure(source, dim)
    else:
        inner = getattr(source, "features_", source)
        measure = getattr(inner, "measure_", None)
        if not isinstance(measure, SpectralMeasure):
            kind = type(source).__name__
            if hasattr(inner, "transform"):
                raise ValueError(f"this {kind} is not fitted yet: call fit() before plot_measure")
            raise TypeError(
                "measure must be a SpectralMeasure, a kernel (RadialKernel, DensityKernel or spec string) "
                f"with dim, or a fitted feature map, got {kind}"
            )
    if dim is not None and dim != measure.dim:
        raise ValueError(f"dim={dim!r} does not match the measure's dimension {measure.dim}")
    return measure


def _symlog_ticks(ax, low, high, linthresh):
    """Ticks on a symlog axis at least 1/7 of the axis apart, 0 and the outermost decades first:
    the default puts a label at every decade, and those around 0 overlap."""

    def position(v):  # matplotlib's symlog transform with linscale 1, in decades
        return math.copysign(1.0 + math.log10(abs(v) / linthresh), v) if abs(v) > linthresh else v / linthresh

    candidates = []
    for side, extent in ((1.0, high), (-1.0, -low)):
        if extent <= 0:
            continue
        first, last = math.ceil(math.log10(linthresh)), math.floor(math.log10(extent))
        values = [10.0**e for e in range(last, first - 1, -1)] or [float(f"{extent:.0e}")]
        candidates += [side * v for v in values]
    gap = (position(high) - position(low)) / 7.0
    ticks = [0.0]
    for v in sorted(candidates, key=lambda v: -abs(position(v))):
        if all(abs(position(v) - position(t)) >= gap for t in ticks):
            ticks.append(v)
    ax.set_yticks(sorted(ticks))


def plot_measure(
    measure: SpectralMeasure | RadialKernel | DensityKernel | str | object,
    dim: int | None = None,
    *,
    rho_max: float | None = None,
    r_max: float | None = None,
    n_points: int = 800,
    figsize: tuple[float, float] = (13.0, 7.5),
    title: str | None = None,
) -> Figure:
    """Draw the kernel, its signed spectral measure, the radial laws and the partial masses.

    Parameters
    ----------
    measure : SpectralMeasure, kernel or fitted feature map
        The measure of a kernel on R^d (divergent measures are drawn too: the M(R) panel then
        shows the growth); or a kernel (:class:`~spectralkit.RadialKernel`, a
        :class:`~spectralkit.kernels.DensityKernel` or a spec string) together with ``dim``; or a
        fitted :class:`~spectralkit.RandomFeatures`, ``spectralkit.sklearn.SpectralFeatures`` or
        ``spectralkit.dask.DaskSpectralFeatures`` (the measure its frequencies were drawn from).
    dim : int, optional
        The dimension d, required with a kernel; with a measure or feature map it must match.
    rho_max : float, optional
        Upper end of the frequency axis (default: where 99.5 % of ||mu|| lies, for finite measures).
    r_max : float, optional
        Upper end of the radius axis (default: 1.2 R for support R, else 5 / smallest scale).
    n_points : int, default 800
        Grid points per curve (>= 50).
    figsize : tuple of float, default (13, 7.5)
        Inches.
    title : str, optional
        Figure title (default: kernel name and dimension).

    Returns
    -------
    matplotlib.figure.Figure
        Six axes in a 2 x 3 grid, in the order listed in the module docstring.
    """
    for name, value in (("rho_max", rho_max), ("r_max", r_max)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0 or None, got {value!r}")
    if isinstance(n_points, bool) or not isinstance(n_points, int) or n_points < 50:
        raise ValueError(f"n_points must be an integer >= 50, got {n_points!r}")
    measure = _as_measure(measure, dim)

    kernel, dim = measure.kernel, measure.dim
    finite = bool(measure.is_finite)
    report = measure.check_rkks() if hasattr(measure, "check_rkks") else None
    if rho_max is not None:
        rho_max = rho_mu = float(rho_max)
    else:
        rho_max = _rho_range(measure, finite)
        # the density panel shows the sign structure where most of the mass is (slow oscillating
        # tails would squeeze it into a few pixels)
        rho_mu = min(rho_max, _rho_range(measure, finite, 0.95)) if finite else rho_max
    r_max = float(r_max) if r_max is not None else _r_range(kernel, measure)

    fig = _figure(figsize)
    axes = fig.subplots(2, 3)
    ax_k, ax_mu, ax_p = axes[0]
    ax_cdf, ax_m, ax_txt = axes[1]
    fig.suptitle(title if title is not None else f"{kernel.name} on R^{dim}")

    # 1. kernel
    r = np.linspace(0.0, r_max, n_points)
    ax_k.plot(r, kernel(r), color=_KERNEL, label="k(r)")
    ax_k.axhline(0.0, color="0.6", lw=0.6)
    if kernel.support is not None:
        ax_k.axvline(kernel.support, color="0.4", ls=":", lw=0.8, label=f"support R = {kernel.support:g}")
    ax_k.set(xlabel="r", ylabel="k(r)", title="kernel")
    ax_k.legend(loc="best", fontsize=8)

    # 2. signed density
    rho_m = np.linspace(0.0, rho_mu, n_points)
    mu = measure.mu(rho_m)
    ax_mu.plot(rho_m, mu, color="k", lw=0.9, label="mu(rho)")
    ax_mu.fill_between(rho_m, 0.0, np.maximum(mu, 0.0), color=_PLUS, alpha=0.45, label="mu+ (positive part)")
    ax_mu.fill_between(rho_m, 0.0, np.minimum(mu, 0.0), color=_MINUS, alpha=0.45, label="mu- (negative part)")
    ax_mu.axhline(0.0, color="0.6", lw=0.6)
    shells = tuple(getattr(measure, "shells", ()) or ())
    _draw_shells(ax_mu, shells, mu)
    zeros = [z for z in (getattr(measure, "sign_changes", ()) or ()) if z <= rho_mu]
    if not zeros:  # e.g. divergent measures carry no located roots: use the grid
        s_ = np.sign(mu)
        idx = np.nonzero((s_[1:] * s_[:-1]) < 0)[0]
        zeros = list(0.5 * (rho_m[idx] + rho_m[idx + 1]))
    for z in zeros[:20]:
        ax_mu.axvline(z, color="0.3", ls=":", lw=0.8)
    peak_p, peak_m = float(np.max(mu, initial=0.0)), float(-np.min(mu, initial=0.0))
    if min(peak_p, peak_m) > 0 and max(peak_p, peak_m) > 20 * min(peak_p, peak_m):
        # one part dwarfs the other (e.g. a wide negative Gaussian): symmetric log axis
        linthresh = 0.5 * min(peak_p, peak_m)
        ax_mu.set_yscale("symlog", linthresh=linthresh)
        _symlog_ticks(ax_mu, -peak_m, peak_p, linthresh)
        scale_note = ", symlog axis"
    else:
        scale_note = ""
    ax_mu.set(
        xlabel="rho = ||w||",
        ylabel="mu(rho)",
        title=f"signed density mu\n({len(zeros)} sign change{'s' if len(zeros) != 1 else ''} "
        f"in view{scale_note})",
    )
    ax_mu.legend(loc="best", fontsize=8)

    # 3./4. radial laws (on the density panel's range) and CDFs (on the full range; a log grid
    # and axis when a long tail would squeeze the head)
    long_tail = rho_max > 5.0 * rho_mu
    if long_tail:
        rho = np.concatenate([[0.0], np.geomspace(rho_max * 1e-4, rho_max, 2 * n_points)])
    else:
        rho = np.linspace(0.0, rho_max, n_points)
    f = measure.radial_density(rho)
    fp, fm = np.maximum(f, 0.0), np.maximum(-f, 0.0)
    f_view = measure.radial_density(rho_m)
    masses = None
    if finite:
        try:
            masses = (float(measure.mass_plus.value), float(measure.mass_minus.value))
        except DivergentMassError:
            masses = None
    truncated_view = masses is None
    if truncated_view:  # divergent: normalise on the plotted range, and say so
        masses = tuple(float(np.trapezoid(g, rho)) for g in (fp, fm))
    for g, gv, m, color, sign in (
        (fp, np.maximum(f_view, 0.0), masses[0], _PLUS, "+"),
        (fm, np.maximum(-f_view, 0.0), masses[1], _MINUS, "-"),
    ):
        if m <= 0:
            continue
        ax_p.plot(rho_m, gv / m, color=color, label=f"p{sign}(rho)")
        ax_p.fill_between(rho_m, 0.0, gv / m, color=color, alpha=0.25)
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(rho))])
        for radius, mass in shells:  # a sphere shell is a jump of the CDF
            if (mass > 0) == (sign == "+"):
                cdf = cdf + abs(mass) * (rho >= radius)
        cdf = cdf / m
        what = f"mass on [0, {rho_max:g}] = {m:.4g}" if truncated_view else f"m{sign} = {m:.4g}"
        ax_cdf.plot(rho, cdf, color=color, label=f"F{sign}(rho), {what}")
    _draw_shells(
        ax_p,
        [
            (r_, m_ / (masses[0] if m_ > 0 else masses[1]))
            for r_, m_ in shells
            if (masses[0] if m_ > 0 else masses[1]) > 0
        ],
        None,
    )
    ax_p.set(
        xlabel="rho",
        ylabel="density",
        title="radial laws of the norms\np± ∝ max(±mu, 0) rho^(d-1)",
        xlim=(0.0, rho_mu),
    )
    if long_tail:
        ax_cdf.set_xscale("log")
        ax_cdf.set_xlim(rho_max * 1e-3, rho_max)
    ax_p.legend(loc="best", fontsize=8)
    ax_cdf.axhline(1.0, color="0.6", lw=0.6, ls="--")
    ax_cdf.set(xlabel="rho", ylabel="CDF", title="CDFs of the radial laws", ylim=(-0.02, 1.05))
    ax_cdf.legend(loc="lower right", fontsize=8)

    # 5. partial masses
    pm = list(getattr(getattr(measure, "finiteness", None), "partial_masses", ()) or ())
    radii = np.geomspace(rho_max / 100.0, rho_max, 10)
    near = measure.partial_masses(radii) if hasattr(measure, "partial_masses") else np.full(10, np.nan)
    pts = sorted({(float(a), float(b)) for a, b in zip(radii, near)} | {(float(a), float(b)) for a, b in pm})
    R = np.array([p[0] for p in pts])
    M = np.array([p[1] for p in pts])
    ok = (R > 0) & (M > 0) & np.isfinite(M)
    ax_m.loglog(R[ok], M[ok], "o-", color="k", ms=3, label="M(R)")
    if finite and report is not None and report.mass_plus is not None:
        total = report.mass_plus.value + report.mass_minus.value
        ax_m.axhline(total, color=_PLUS, ls="--", lw=1, label=f"||mu|| = m+ + m- = {total:.5g}")
    slope = getattr(getattr(measure, "finiteness", None), "growth_slope", float("nan"))
    if finite:
        title = "partial mass M(R) converges"
    else:
        title = "partial mass M(R) diverges" + (f" (~R^{slope:.2f})" if math.isfinite(slope) else "")
    ax_m.set(xlabel="R", ylabel="M(R)", title=title)
    ax_m.legend(loc="best", fontsize=8)

    # 6. summary
    ax_txt.set_axis_off()
    lines = [f"verdict: {report.verdict}" if report is not None else ""]
    if report is not None:
        if report.mass_plus is not None:
            lines += [f"m+ = {report.mass_plus}", f"m- = {report.mass_minus}"]
        te = report.tail_exponent
        lines.append("tail: faster than any power" if te == math.inf else f"tail: |mu| ~ rho^-{te:g}")
        lines += textwrap.wrap(f"method: {report.method}", 52)[:3]
        lines += textwrap.wrap(f"reason: {report.reason}", 52)[:10]
    ax_txt.text(
        0.0,
        1.0,
        "\n".join(lines),
        va="top",
        ha="left",
        family="monospace",
        fontsize=8,
        transform=ax_txt.transAxes,
    )
    return fig


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: float = 110) -> str | os.PathLike[str]:
    """Write ``fig`` to ``path`` (format from the suffix: .png, .pdf, .svg) with the Agg renderer."""
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not dpi > 0:
        raise ValueError(f"dpi must be a number > 0, got {dpi!r}")
    fig.savefig(path, dpi=dpi)
    return path

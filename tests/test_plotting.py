"""Figures of a spectral measure: rendered to PNG and inspected."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.image import imread

from spectralkit import RandomFeatures, SpectralMeasure, kernels
from spectralkit.plotting import plot_measure, save_figure


@pytest.fixture(scope="module")
def dg3():
    return SpectralMeasure(kernels.delta_gaussian(1.0, 10.0), 3)


def _shading(ax, label):
    polys = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_label() == label]
    assert len(polys) == 1, [c.get_label() for c in ax.collections]
    return np.concatenate([p.vertices for p in polys[0].get_paths()])


def test_figure_layout_labels_and_shading(dg3, tmp_path):
    fig = plot_measure(dg3)
    axes = fig.get_axes()
    assert len(axes) == 6
    ax_k, ax_mu, ax_p, ax_cdf, ax_m, ax_txt = axes
    assert (ax_k.get_xlabel(), ax_k.get_ylabel()) == ("r", "k(r)")
    assert ax_mu.get_ylabel() == "mu(rho)" and ax_mu.get_xlabel().startswith("rho")
    assert ax_cdf.get_ylabel() == "CDF" and ax_m.get_xscale() == "log" and ax_m.get_yscale() == "log"
    assert "RKKS" in fig.get_suptitle() or "R^3" in fig.get_suptitle()
    # + shaded above the axis, - below, both with area (the delta-Gaussian has both signs in d = 3)
    plus = _shading(ax_mu, "mu+ (positive part)")
    minus = _shading(ax_mu, "mu- (negative part)")
    assert plus[:, 1].min() >= 0 and plus[:, 1].max() > 0
    assert minus[:, 1].max() <= 0 and minus[:, 1].min() < 0
    # the + part lives above the sign change, the - part below it (mu(0) < 0: wide Gaussian wins)
    z = dg3.sign_changes[0]
    assert plus[plus[:, 1] > 0, 0].min() >= z * 0.99
    assert minus[minus[:, 1] < 0, 0].max() <= z * 1.01
    # the CDFs reach 1 on the plotted range (99.5 % of the mass is inside it; the trapezoid rule
    # on 800 points is accurate to ~1e-5 here)
    cdfs = [ln for ln in ax_cdf.get_lines() if ln.get_label().startswith("F")]
    assert len(cdfs) == 2
    for line in cdfs:
        assert 0.99 < line.get_ydata()[-1] <= 1.0 + 1e-4
    text = ax_txt.texts[0].get_text()
    assert "verdict: RKKS" in text and "m+ = " in text
    path = tmp_path / "measure.png"
    save_figure(fig, path, dpi=60)
    img = imread(path)
    assert path.stat().st_size > 10_000
    assert img.shape[:2] == (round(7.5 * 60), round(13 * 60))
    # not blank: both shading colours are present in the picture
    rgb = (img[..., :3] * 255).astype(int).reshape(-1, 3)
    near = lambda c: np.any(np.all(np.abs(rgb - c) < 40, axis=1))
    assert near((141, 204, 162)) or near((26, 152, 80))  # green (+)
    assert near((236, 152, 147)) or near((215, 48, 39))  # red (-)


def test_pd_kernel_has_no_negative_shading(tmp_path):
    fig = plot_measure(SpectralMeasure(kernels.gaussian(1.0), 2), n_points=200)
    ax_mu = fig.get_axes()[1]
    minus = _shading(ax_mu, "mu- (negative part)")
    assert np.allclose(minus[:, 1], 0.0)
    assert len(fig.get_axes()[2].get_lines()) == 1  # only p+


def test_divergent_measure_shows_growth():
    m = SpectralMeasure(kernels.spherical_polynomial(a=3.0, p=2), 3)
    fig = plot_measure(m, n_points=200)
    ax_m = fig.get_axes()[4]
    assert "diverges" in ax_m.get_title()
    R, M = ax_m.get_lines()[0].get_data()
    assert M[-1] > 10 * M[len(M) // 2]  # grows without bound over the last decades


def test_argument_errors(dg3):
    with pytest.raises(ValueError, match="rho_max must be a finite number > 0 or None, got -1"):
        plot_measure(dg3, rho_max=-1)
    with pytest.raises(ValueError, match="n_points must be an integer >= 50, got 10"):
        plot_measure(dg3, n_points=10)
    with pytest.raises(TypeError, match=r"plot_measure\(kernel\) needs dim=d: the spectral measure"):
        plot_measure("gaussian")
    with pytest.raises(TypeError, match="measure must be a SpectralMeasure, a kernel .* got int"):
        plot_measure(3)
    with pytest.raises(ValueError, match="dim=4 does not match the measure's dimension 3"):
        plot_measure(dg3, 4)
    with pytest.raises(ValueError, match="this RandomFeatures is not fitted yet: call fit"):
        plot_measure(RandomFeatures("gaussian", dim=3))
    with pytest.raises(ValueError, match="dpi must be a number > 0"):
        save_figure(None, "x.png", dpi=0)


def test_kernels_and_fitted_feature_maps_are_drawn_by_their_measure(dg3):
    k = kernels.delta_gaussian(1.0, 10.0)
    rf = RandomFeatures(k, dim=3, n_components=64, random_state=0).fit()
    for source, dim in ((k, 3), ("delta_gaussian:sigma1=1,sigma2=10", 3), (rf, None), (rf, 3)):
        fig = plot_measure(source, dim, n_points=100)
        assert fig.get_suptitle() == f"{k.name} on R^3"
        ax_mu = fig.get_axes()[1]
        np.testing.assert_allclose(ax_mu.get_lines()[0].get_ydata(), dg3.mu(ax_mu.get_lines()[0].get_xdata()))
    sklearn = pytest.importorskip("spectralkit.sklearn")
    est = sklearn.SpectralFeatures(k, n_components=64, random_state=0).fit(np.zeros((5, 3)))
    assert plot_measure(est, n_points=100).get_axes()[1].get_yscale() == "symlog"


def _overlaps(boxes):
    return [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1
    ]


@pytest.mark.parametrize("dim", [3, 8, 16])
def test_symlog_tick_labels_do_not_overlap(dim):
    # the delta-Gaussian's negative part (the wide Gaussian's narrow spectrum) dwarfs its positive
    # part: a symlog axis, whose default ticks crowd around 0
    fig = plot_measure(SpectralMeasure(kernels.delta_gaussian(1.0, 10.0), dim), n_points=100)
    ax_mu = fig.get_axes()[1]
    assert ax_mu.get_yscale() == "symlog"
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    low, high = ax_mu.get_ylim()
    labels = [
        t
        for t, v in zip(ax_mu.get_yticklabels(), ax_mu.get_yticks())
        if t.get_visible() and t.get_text() and low <= v <= high
    ]
    assert 3 <= len(labels) <= 11
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert not _overlaps(boxes), [t.get_text() for t in labels]

"""Tests of spectralkit.sampling.directions: Haar blocks, ORF / GORF orthogonality, uniform marginals, unbiasedness.

Orthogonality is exact (checked to 1e-12). Marginal laws use KS tests at alpha = 1e-3 with fixed
seeds: a coordinate x_1 of a uniform unit vector in R^d has x_1^2 ~ Beta(1/2, (d-1)/2) and a
symmetric sign. Means are compared within 4 standard errors estimated from the same draws.
"""

import importlib
import math

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hst

from spectralkit import kernels
from spectralkit.sampling import exact_sampler
from spectralkit.sampling.directions import (
    METHODS,
    directions,
    draw_frequencies,
    gorf_directions,
    gorf_paper_directions,
    haar_orthogonal,
    orthogonal_directions,
    uniform_directions,
)

ALPHA = 1e-3
# the module (spectralkit.sampling's attribute of that name is the function directions)
directions_module = importlib.import_module("spectralkit.sampling.directions")


def _first_coordinate_ok(first, dim):
    """KS of x_1^2 against Beta(1/2, (d-1)/2) and a 4-SE test of the mean of x_1 (= 0)."""
    if dim > 1:
        assert st.kstest(first**2, st.beta(0.5, 0.5 * (dim - 1)).cdf).pvalue > ALPHA
    assert abs(first.mean()) <= 4 * first.std() / math.sqrt(len(first))


@pytest.mark.parametrize("dim", [1, 2, 5, 16])
def test_haar_blocks_are_orthogonal_and_uniform(dim):
    rng = np.random.default_rng(dim)
    qs = np.array([haar_orthogonal(dim, rng) for _ in range(4000)])
    eye = np.eye(dim)
    assert np.abs(qs @ qs.transpose(0, 2, 1) - eye).max() < 1e-12
    _first_coordinate_ok(qs[:, 0, 0], dim)  # the sign fix makes Q[0, 0] symmetric
    _first_coordinate_ok(qs[:, -1, 0], dim)


def test_without_sign_fix_qr_is_not_haar():
    """Power check of the mean test: plain numpy QR gives Q[0, 0] of one sign only."""
    rng = np.random.default_rng(0)
    first = np.array([np.linalg.qr(rng.standard_normal((4, 4)))[0][0, 0] for _ in range(4000)])
    assert abs(first.mean()) > 4 * first.std() / math.sqrt(len(first))


@pytest.mark.parametrize("n,dim", [(32, 4), (32, 3), (5, 64), (700, 7)])
def test_batched_blocks_equal_one_block_after_another(n, dim, monkeypatch):
    """orthogonal_directions factorises its blocks in batches (chunks of a few here, so chunk ends are
    crossed): the rows are bit for bit those of one plain QR per block, Q diag(sign(diag R))."""
    monkeypatch.setattr(directions_module, "_BATCH_BYTES", 3 * 8 * dim * dim)
    rng = np.random.default_rng(n + dim)
    blocks = []
    for _ in range(-(-n // dim)):
        q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
        signs = np.sign(np.diag(r))
        blocks.append(q * np.where(signs == 0, 1.0, signs)[None, :])
    one_by_one = np.concatenate(blocks)[:n]
    assert np.array_equal(orthogonal_directions(n, dim, np.random.default_rng(n + dim)), one_by_one)


@pytest.mark.parametrize("dim", [1, 3, 16])
def test_uniform_directions(dim):
    d = uniform_directions(20_000, dim, np.random.default_rng(1))
    assert d.shape == (20_000, dim)
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0)
    _first_coordinate_ok(d[:, 0], dim)
    proj = d @ (np.arange(1, dim + 1) / np.linalg.norm(np.arange(1, dim + 1)))  # a fixed projection
    _first_coordinate_ok(proj, dim)


@settings(max_examples=20, deadline=None)
@given(dim=hst.integers(1, 40), n=hst.integers(0, 130), seed=hst.integers(0, 2**32 - 1))
def test_orthogonal_directions_any_count(dim, n, seed):
    """ceil(n/d) Haar blocks, last one truncated: rows orthonormal within each block."""
    d = orthogonal_directions(n, dim, np.random.default_rng(seed))
    assert d.shape == (n, dim)
    for start in range(0, n, dim):
        block = d[start : start + dim]
        assert np.abs(block @ block.T - np.eye(len(block))).max() < 1e-12


@settings(max_examples=20, deadline=None)
@given(
    dim=hst.integers(1, 40),
    n_plus=hst.integers(0, 70),
    n_minus=hst.integers(0, 70),
    seed=hst.integers(0, 2**32 - 1),
)
def test_gorf_plus_and_minus_jointly_orthogonal(dim, n_plus, n_minus, seed):
    """The + and - rows come from shared blocks: every pair within a block is orthogonal."""
    rng = np.random.default_rng(seed)
    dp, dm = gorf_directions(n_plus, n_minus, dim, rng)
    assert dp.shape == (n_plus, dim) and dm.shape == (n_minus, dim)
    # rebuild the row order of the blocks (the deal is deterministic) and check each block
    rows = orthogonal_directions(n_plus + n_minus, dim, np.random.default_rng(seed))
    from spectralkit.sampling.directions import _deal

    mask = _deal(n_plus, n_minus)
    assert mask.sum() == n_plus
    assert np.array_equal(rows[mask], dp) and np.array_equal(rows[~mask], dm)
    for start in range(0, n_plus + n_minus, dim):
        block = rows[start : start + dim]
        assert np.abs(block @ block.T - np.eye(len(block))).max() < 1e-12


def test_gorf_alternates_and_cross_orthogonal():
    dp, dm = gorf_directions(8, 8, 16, np.random.default_rng(3))
    assert np.abs(dp @ dm.T).max() < 1e-12  # one block of 16 rows: all + orthogonal to all -
    from spectralkit.sampling.directions import _deal

    assert list(_deal(3, 3)) == [False, True, False, True, False, True]


def test_gorf_paper_is_a_non_orthogonal_baseline():
    """Paper construction: unit columns, uniform marginals, but NOT orthogonal when N > d."""
    dim = 8
    dp, dm = gorf_paper_directions(16, 16, dim, np.random.default_rng(0))
    both = np.vstack([dp, dm])
    assert np.allclose(np.linalg.norm(both, axis=1), 1.0)
    gram = both @ both.T
    assert np.abs(gram - np.diag(np.diag(gram))).max() > 0.3
    firsts = np.concatenate(
        [gorf_paper_directions(4, 4, dim, np.random.default_rng(s))[0][:, 0] for s in range(2000)]
    )
    _first_coordinate_ok(firsts, dim)


@pytest.mark.parametrize("method", METHODS)
def test_marginals_uniform_for_every_method(method):
    dim = 6
    rng = np.random.default_rng(4)
    firsts_p, firsts_m = [], []
    for _ in range(1500):
        dp, dm = directions(method, 7, 5, dim, rng)
        firsts_p.append(dp[:, 0])
        firsts_m.append(dm[:, 0])
    _first_coordinate_ok(np.concatenate(firsts_p), dim)
    _first_coordinate_ok(np.concatenate(firsts_m), dim)


@pytest.mark.parametrize("method", METHODS)
def test_unbiased_gaussian_kernel(method):
    """(1/s) sum cos(w_i . z) over 3000 independent draws of s = 24 frequencies: mean = k(z) within 4 SE."""
    dim, s = 8, 24
    kern = kernels.gaussian(1.0)
    ex = exact_sampler(kern, dim)
    rng = np.random.default_rng(5)
    z = rng.standard_normal(dim)
    z *= 1.2 / np.linalg.norm(z)
    est = np.empty(3000)
    for i in range(len(est)):
        wp, wm = draw_frequencies(method, s, s, dim, rng, ex.sample_norms, ex.sample_norms)
        est[i] = 0.5 * (np.cos(wp @ z).mean() + np.cos(wm @ z).mean())
    assert abs(est.mean() - kern(1.2)) <= 4 * est.std() / math.sqrt(len(est))


def test_orf_reduces_variance_gaussian():
    """ORF: lower variance than i.i.d. for the Gaussian kernel in d = 16, s = d (variance ratio < 1
    by more than 4 SE of the log-ratio)."""
    dim = 16
    ex = exact_sampler(kernels.gaussian(1.0), dim)
    rng = np.random.default_rng(6)
    z = np.zeros(dim)
    z[0] = 1.0
    v = {}
    for method in ("rff", "orf"):
        est = [
            np.cos(draw_frequencies(method, dim, 0, dim, rng, ex.sample_norms)[0] @ z).mean()
            for _ in range(4000)
        ]
        v[method] = np.var(est)
    # SE of log(sample variance) ~ sqrt(2 / n) each (near-Gaussian estimates)
    assert math.log(v["orf"] / v["rff"]) < -4 * math.sqrt(2 * 2 / 4000)


def test_determinism_and_validation():
    a = directions("gorf", 5, 7, 9, np.random.default_rng(1))
    b = directions("gorf", 5, 7, 9, np.random.default_rng(1))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="method must be one of"):
        directions("sorf", 1, 1, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_plus must be a non-negative integer"):
        directions("rff", -1, 1, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="dim must be an integer in"):
        directions("rff", 1, 1, 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        directions("rff", 1, 1, 2, 0)
    with pytest.raises(ValueError, match="sample_minus must be a norm sampler"):
        draw_frequencies("rff", 1, 1, 2, np.random.default_rng(0), lambda n, r: np.ones(n), None)
    with pytest.raises(ValueError, match="invalid norms"):
        draw_frequencies("rff", 2, 0, 2, np.random.default_rng(0), lambda n, r: -np.ones(n))
    wp, wm = draw_frequencies("orf", 3, 0, 4, np.random.default_rng(0), lambda n, r: np.full(n, 2.0))
    assert wm.shape == (0, 4) and np.allclose(np.linalg.norm(wp, axis=1), 2.0)

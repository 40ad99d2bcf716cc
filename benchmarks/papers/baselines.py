"""Baselines for the paper suite: the papers' own (biased) estimator, the paper's GORF
directions, scikit-learn's Nystroem and RBFSampler, and Krein / plain ridge regression.

Every feature map here is a :class:`SignedFeatures`: a real feature matrix ``Phi`` and a
signature vector ``J`` (+1/-1 per column) with the kernel estimate
``K^(x, y) = Phi(x) diag(J) Phi(y)^T`` (docs/theory.md §2). Conventions are those of docs/theory.md §1:
``k(z) = ∫ exp(i w·z) mu(w) dw`` and the radial density ``f(rho) = S_{d-1} rho^(d-1) mu(rho)``.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.special as sps

__all__ = [
    "SignedFeatures",
    "radial_mu",
    "PaperEstimator",
    "paper_gorf_directions",
    "iid_directions",
    "nystroem_features",
    "rbf_sampler_features",
    "signed_sincos_features",
    "krein_ridge",
    "plain_ridge",
]


@dataclass
class SignedFeatures:
    """A fitted feature map ``x -> [cos(W x) | sin(W x)]`` blocks with scales and a signature.

    Attributes
    ----------
    transform : callable
        ``X -> Phi`` (n, n_components) float64.
    signature : ndarray of +1.0 / -1.0, shape (n_components,)
    info : dict
        Masses, frequency counts and anything the report should state.
    """

    transform: object
    signature: np.ndarray
    info: dict

    def kernel_approx(self, X, Y=None):
        """Signed Gram estimate ``Phi_X diag(J) Phi_Y^T``."""
        PX = self.transform(X)
        PY = PX if Y is None else self.transform(Y)
        return (PX * self.signature) @ PY.T


def _sincos_map(W, scale):
    """Features ``scale * [cos(X W^T) | sin(X W^T)]`` for frequencies W (s, d)."""
    W = np.asarray(W, dtype=np.float64)

    def transform(X):
        P = np.asarray(X, dtype=np.float64) @ W.T
        return scale * np.hstack([np.cos(P), np.sin(P)])

    return transform


def _stack(maps, signs):
    def transform(X):
        return np.hstack([m(X) for m in maps])

    return transform, np.concatenate(signs)


# -- spectral densities with closed forms (used by the papers' estimator) ------------------


def radial_mu(kernel, dim, normalised=True):
    """Closed-form signed spectral density mu(rho) of a library kernel (docs/theory.md §1 convention).

    ``normalised=False`` drops the positive factor ``(2π)^(-d/2)`` (and, for Gaussian terms,
    divides by ``max_i l_i^d``): the shape only, which avoids underflow in high d (d = 256)
    where only normalised laws are needed.

    Supported: linear combinations of Gaussians (so the delta-Gaussian),
    ``mu(rho) = Σ c_i (2π)^(-d/2) l_i^d exp(-l_i^2 rho^2 / 2)``, and the spherical polynomial
    ``(1 - r^2/a^2)^p`` with zero extension beyond r = 2 (Sonine's integral; GORF eq. (18)
    with the constant ``(2π)^(-d/2)``):
    ``mu(rho) = (2π)^(-d/2) Σ_{i=0}^{p} p!/(p-i)! (1 - 4/a^2)^(p-i) (2/a^2)^i (2/rho)^(d/2+i) J_{d/2+i}(2 rho)``.
    ``(2/rho)^nu J_nu(2 rho) = 2^nu/Γ(nu+1) 0F1(; nu+1; -rho^2)`` is used for rho <= 1 (no
    cancellation near 0) and the Bessel form beyond (where 0F1 loses accuracy).

    Returns
    -------
    callable
        Vectorised ``mu(rho)`` for rho >= 0.
    """
    if not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    const = (2 * math.pi) ** (-dim / 2) if normalised else 1.0
    terms = kernel.terms
    if all(a.family is not None and a.family[0] == "gaussian" for _, a in terms):
        parts = [(c, a.family[1]["lengthscale"]) for c, a in terms]
        lmax = max(l for _, l in parts)

        def mu(rho):
            rho = np.asarray(rho, dtype=np.float64)
            if normalised:
                return const * sum(c * l**dim * np.exp(-0.5 * (l * rho) ** 2) for c, l in parts)
            return sum(c * np.exp(dim * math.log(l / lmax) - 0.5 * (l * rho) ** 2) for c, l in parts)

        return mu
    fam = kernel.family
    if fam is not None and fam[0] == "spherical_polynomial":
        a, p = fam[1]["a"], int(fam[1]["p"])
        coefs = [
            math.factorial(p) / math.factorial(p - i) * (1 - 4 / a**2) ** (p - i) * (2 / a**2) ** i
            for i in range(p + 1)
        ]

        def mu(rho):
            rho = np.asarray(rho, dtype=np.float64)
            out = np.zeros_like(rho)
            small = rho <= 1.0
            for i, c in enumerate(coefs):
                nu = dim / 2 + i
                term = np.empty_like(rho)
                term[small] = math.exp(nu * math.log(2) - math.lgamma(nu + 1)) * _hyp0f1_neg(
                    nu + 1, rho[small] ** 2
                )
                rb = rho[~small]
                term[~small] = (2 / rb) ** nu * sps.jv(nu, 2 * rb)
                out += c * term
            return const * out

        return mu
    raise ValueError(
        f"kernel must be a combination of Gaussians or a spherical polynomial for the "
        f"closed-form density, got {kernel.name!r}"
    )


def _hyp0f1_neg(b, x, terms=40):
    """``0F1(; b; -x)`` for 0 <= x <= 1 and b >= 1 by its power series (scipy's hyp0f1 returns
    NaN for some small arguments when b > 100); 40 terms reach machine precision for x <= 1."""
    out = np.ones_like(x)
    term = np.ones_like(x)
    for k in range(terms):
        term = term * (-x) / ((b + k) * (k + 1))
        out = out + term
    return out


# -- directions ---------------------------------------------------------------------------


def iid_directions(dim, n, rng):
    """``n`` independent directions uniform on S^(dim-1), shape (n, dim)."""
    G = rng.standard_normal((n, dim))
    return G / np.linalg.norm(G, axis=1, keepdims=True)


def paper_gorf_directions(dim, s, rng):
    """The GORF paper's joint directions for s + and s - frequencies (its Algorithm 1 / code).

    One QR of a ``2m x 2m`` Gaussian matrix, ``m = max(s, d)``; keep the first ``d`` rows,
    columns ``0..s-1`` for the + part and ``m..m+s-1`` for the - part, and renormalise each
    column. When ``2m > d`` the kept columns are **not** orthogonal (docs/theory.md §3, §6); this is
    kept only as the published baseline.

    Returns
    -------
    (D_plus, D_minus) : ndarrays (s, dim) of unit rows
    """
    m = max(s, dim)
    # The first d rows of a Haar-random 2m x 2m orthogonal matrix (the code's QR of a square
    # Gaussian matrix) are a uniformly random orthonormal d-frame of R^(2m): the same law as the
    # orthonormalised rows of a d x 2m Gaussian matrix, which costs O(m d^2) instead of O(m^3).
    Q, R = np.linalg.qr(rng.standard_normal((2 * m, dim)))
    Q = (Q * np.sign(np.diag(R))).T
    Dp, Dm = Q[:, :s].T, Q[:, m : m + s].T
    Dp = Dp / np.linalg.norm(Dp, axis=1, keepdims=True)
    Dm = Dm / np.linalg.norm(Dm, axis=1, keepdims=True)
    return Dp, Dm


# -- the papers' estimator ---------------------------------------------------------------


class PaperEstimator:
    """The random features exactly as the papers' code builds them (a biased baseline).

    The density is tabulated on ``rho in [0, rho_max]`` (``n_grid`` points; the code uses
    [0, 100] with 20000 points), split by sign, and — the errors listed in docs/theory.md §7 — the
    frequency norms are drawn from ``|mu±(rho)|`` **without** the Jacobian ``S_{d-1} rho^(d-1)``,
    and the masses are the 1-D integrals ``c± = ∫|mu±| drho`` normalised to ``c+ + c- = 1``.
    So ``K^(0) = c+ - c-`` differs from k(0) and the estimator does not converge to k.

    Parameters
    ----------
    kernel : RadialKernel
        A kernel accepted by :func:`radial_mu`.
    dim : int
    rho_max : float, n_grid : int
        The tabulation grid (defaults: the code's).
    """

    def __init__(self, kernel, dim, rho_max=100.0, n_grid=20000):
        if not (np.isfinite(rho_max) and rho_max > 0):
            raise ValueError(f"rho_max must be a positive finite number, got {rho_max!r}")
        if n_grid < 10:
            raise ValueError(f"n_grid must be >= 10, got {n_grid!r}")
        self.kernel, self.dim = kernel, int(dim)
        grid = np.linspace(0.0, rho_max, n_grid)
        mu = radial_mu(kernel, self.dim, normalised=False)(grid)  # masses are normalised anyway
        self._tables = {}
        masses = {}
        for sign in (+1, -1):
            part = np.maximum(sign * mu, 0.0)
            masses[sign] = float(np.trapezoid(part, grid))
            if masses[sign] > 0:
                cdf, idx = np.unique(np.cumsum(part) / part.sum(), return_index=True)
                self._tables[sign] = (cdf, grid[idx])
        total = masses[1] + masses[-1]
        if not total > 0:
            raise ValueError(
                f"the tabulated density of {kernel.name!r} in d={dim} vanishes on [0, {rho_max}]"
            )
        self.c_plus, self.c_minus = masses[1] / total, masses[-1] / total

    def _norms(self, sign, n, rng):
        cdf, x = self._tables[sign]
        # the code's interp1(..., 'linear', 0): uniforms below the first CDF value give 0
        return np.interp(rng.uniform(size=n), cdf, x, left=0.0)

    def features(self, s, rng, directions="iid"):
        """Feature map with ``s`` frequencies per part (``4 s`` columns; fewer if a part is empty).

        ``directions``: ``"iid"`` (the papers' GRFF) or ``"paper-gorf"`` (their GORF).
        """
        if directions not in ("iid", "paper-gorf"):
            raise ValueError(f"directions must be 'iid' or 'paper-gorf', got {directions!r}")
        if directions == "iid":
            Dp, Dm = iid_directions(self.dim, s, rng), iid_directions(self.dim, s, rng)
        else:
            Dp, Dm = paper_gorf_directions(self.dim, s, rng)
        maps, signs = [], []
        for sign, D, c in ((1, Dp, self.c_plus), (-1, Dm, self.c_minus)):
            if sign in self._tables:
                W = self._norms(sign, s, rng)[:, None] * D
                maps.append(_sincos_map(W, math.sqrt(c / s)))
                signs.append(np.full(2 * s, float(sign)))
        transform, sig = _stack(maps, signs)
        return SignedFeatures(
            transform,
            sig,
            {
                "mass_plus": self.c_plus,
                "mass_minus": self.c_minus,
                "n_plus": s,
                "n_minus": s,
                "directions": directions,
            },
        )


def signed_sincos_features(W_plus, W_minus, mass_plus, mass_minus):
    """The unbiased estimator of docs/theory.md §2 for given frequencies and true masses."""
    maps, signs = [], []
    for W, m, sg in ((W_plus, mass_plus, 1.0), (W_minus, mass_minus, -1.0)):
        if len(W):
            maps.append(_sincos_map(W, math.sqrt(m / len(W))))
            signs.append(np.full(2 * len(W), sg))
    transform, sig = _stack(maps, signs)
    return SignedFeatures(
        transform,
        sig,
        {"mass_plus": mass_plus, "mass_minus": mass_minus, "n_plus": len(W_plus), "n_minus": len(W_minus)},
    )


# -- scikit-learn baselines ---------------------------------------------------------------


def nystroem_features(gram, X_pool, n_landmarks, rng):
    """scikit-learn's ``Nystroem`` on a precomputed kernel, ``n_landmarks`` random landmarks.

    ``gram(A, B)`` evaluates the exact kernel matrix. Nystroem takes an SVD of the landmark
    Gram ``K_bb`` and uses ``|K_bb|^(-1/2)`` (singular values, not eigenvalues), so on an
    indefinite kernel its estimate is ``K_nb |K_bb|^(-1) K_bn``: a PD approximation of the
    wrong sign structure (docs/theory.md §8). Signature all +1.
    """
    from sklearn.kernel_approximation import Nystroem

    m = min(int(n_landmarks), len(X_pool))
    idx = rng.choice(len(X_pool), size=m, replace=False)
    L = X_pool[idx]
    ny = Nystroem(kernel="precomputed", n_components=m, random_state=int(rng.integers(2**31)))
    ny.fit(gram(L, L))

    def transform(X):
        return ny.transform(gram(X, L))

    return SignedFeatures(transform, np.ones(m), {"n_landmarks": m})


def rbf_sampler_features(kernel, n_components, rng):
    """scikit-learn's ``RBFSampler`` for a linear combination of Gaussian kernels.

    Each term ``c_i exp(-r^2/(2 l_i^2))`` gets its own sampler (``gamma = 1/(2 l_i^2)``,
    ``n_components / n_terms`` random cosines), scaled by ``sqrt(|c_i|)`` with signature
    ``sign(c_i)``: the coefficient split, unbiased, masses ``|c_i|``.
    """
    from sklearn.kernel_approximation import RBFSampler

    terms = kernel.terms
    if not all(a.family is not None and a.family[0] == "gaussian" for _, a in terms):
        raise ValueError(f"RBFSampler applies to combinations of Gaussian kernels only, got {kernel.name!r}")
    n_each = max(1, int(n_components) // len(terms))
    samplers, signs = [], []
    for c, a in terms:
        l = a.family[1]["lengthscale"]
        rs = RBFSampler(gamma=1.0 / (2 * l * l), n_components=n_each, random_state=int(rng.integers(2**31)))
        samplers.append((rs, math.sqrt(abs(c))))
        signs.append(np.full(n_each, math.copysign(1.0, c)))
    dim_holder = {}

    def transform(X):
        X = np.asarray(X, dtype=np.float64)
        if "fitted" not in dim_holder:
            for rs, _ in samplers:
                rs.fit(X[:1])
            dim_holder["fitted"] = True
        return np.hstack([sc * rs.transform(X) for rs, sc in samplers])

    return SignedFeatures(
        transform,
        np.concatenate(signs),
        {
            "mass_plus": float(sum(c for c, _ in terms if c > 0)),
            "mass_minus": float(-sum(c for c, _ in terms if c < 0)),
        },
    )


# -- regression ----------------------------------------------------------------------------


def krein_ridge(Phi, signature, y, lam):
    """Krein ridge regression with the indefinite Gram ``K = Phi J Phi^T`` (docs/theory.md §2).

    Solves ``a = (Phi^T Phi J + lam I)^(-1) Phi^T (y - ybar)``; predictions are
    ``f(x) = phi(x)^T J a + ybar`` (the intercept is the training mean). Cost O(n s^2 + s^3).

    Returns
    -------
    callable
        ``predict(Phi_new)``.
    """
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be a positive finite number, got {lam!r}")
    ybar = float(np.mean(y))
    J = np.asarray(signature, dtype=np.float64)
    A = (Phi.T @ Phi) * J[None, :] + lam * np.eye(Phi.shape[1])
    a = np.linalg.solve(A, Phi.T @ (y - ybar))
    coef = J * a
    return lambda P: P @ coef + ybar


def plain_ridge(Phi, y, lam):
    """Ridge regression on the features ``[Phi+ | Phi-]`` (the PD kernel k+ + k-).

    ``beta = (Phi^T Phi + lam I)^(-1) Phi^T (y - ybar)``, ``f(x) = phi(x)^T beta + ybar``.
    """
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be a positive finite number, got {lam!r}")
    ybar = float(np.mean(y))
    beta = np.linalg.solve(Phi.T @ Phi + lam * np.eye(Phi.shape[1]), Phi.T @ (y - ybar))
    return lambda P: P @ beta + ybar

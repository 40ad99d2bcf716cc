"""Frequency sampling: radial norm laws (tabulated for any measure, exact for families) and directions.

A radial spectral law factorises into a uniform direction on the unit sphere and an independent
norm; :mod:`.directions` draws the directions (i.i.d., orthogonal, jointly orthogonal), the norm
samplers the norms (:class:`RadialSampler` for any finite signed measure, :class:`ExactSampler` for
the Gaussian scale-mixture families).
"""

from ._exact import EXACT_FAMILIES, ExactSampler, exact_sampler
from ._radial import RadialSampler, radial_sampler, sobol_uniforms
from .directions import (
    METHODS,
    directions,
    draw_frequencies,
    gorf_directions,
    gorf_paper_directions,
    haar_orthogonal,
    orthogonal_directions,
    uniform_directions,
)

__all__ = [
    "RadialSampler",
    "radial_sampler",
    "ExactSampler",
    "exact_sampler",
    "EXACT_FAMILIES",
    "sobol_uniforms",
    "METHODS",
    "haar_orthogonal",
    "uniform_directions",
    "orthogonal_directions",
    "gorf_directions",
    "gorf_paper_directions",
    "directions",
    "draw_frequencies",
]

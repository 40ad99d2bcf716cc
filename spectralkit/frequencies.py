"""Frequency directions (kept for compatibility: see :mod:`spectralkit.sampling.directions`)."""

from .sampling.directions import (
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
    "METHODS",
    "haar_orthogonal",
    "uniform_directions",
    "orthogonal_directions",
    "gorf_directions",
    "gorf_paper_directions",
    "directions",
    "draw_frequencies",
]

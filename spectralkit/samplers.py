"""Norm samplers (kept for compatibility: the implementation lives in :mod:`spectralkit.sampling`)."""

from .sampling import EXACT_FAMILIES, ExactSampler, RadialSampler, exact_sampler, sobol_uniforms

__all__ = ["RadialSampler", "ExactSampler", "exact_sampler", "EXACT_FAMILIES", "sobol_uniforms"]

"""Exceptions raised by spectralkit.

Every error names the offending argument, its value and what is allowed.
"""

__all__ = [
    "SpectralkitError",
    "KernelDefinitionError",
    "DivergentMassError",
    "TransformError",
    "AccuracyWarning",
]


class SpectralkitError(Exception):
    """Base class of all spectralkit errors."""


class KernelDefinitionError(SpectralkitError, ValueError):
    """A kernel formula or its parameters are not acceptable.

    Raised for formulas outside the parser's whitelist (attribute access, unknown names or
    functions, lambdas, ...), for free symbols other than the radius ``r`` and the declared
    parameters, and for invalid parameter values. Nothing of the rejected text is evaluated.
    """


class DivergentMassError(SpectralkitError, ValueError):
    """The spectral measure has infinite total mass ``||mu|| = inf``.

    Such a kernel is not a difference of two positive definite kernels with finite spectral
    masses, so it has no unbiased random-feature estimator of the signed-measure type. The
    message carries the reason (e.g. the boundary singularity and the tail exponent).

    Attributes
    ----------
    reason : str
        The explanation in words.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason if reason is not None else message


class TransformError(SpectralkitError, RuntimeError):
    """A spectral measure could not be computed to the requested accuracy."""


class AccuracyWarning(RuntimeWarning):
    """A numerical self-check failed: a result is returned, but its stated accuracy is not proven.

    Example: the Bochner identity k(0) = m+ - m- holds only outside the summed mass errors. The
    message carries the numbers; treat the result with care (features built from it may be biased
    by the discrepancy at r = 0).
    """

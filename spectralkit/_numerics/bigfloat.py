"""Exact-integer floating point for long series: values ``(mantissa, exponent)`` = mantissa 2^exponent.

mpmath's mpf arithmetic normalises after every operation; Horner's rule on Python integers with a
lazily normalised binary exponent costs one big-integer multiply, one shift and one add per step
(about 10x cheaper) with the rounding of ``prec``-bit floating point per step.
"""

import gmpy2
import mpmath

__all__ = ["int_pair", "horner_pairs", "to_gmpy"]

_GMPY_TYPES = (type(gmpy2.mpfr(0)), type(gmpy2.mpc(0)))


def to_gmpy(x):
    """An mpmath number (real or complex) as gmpy2's mpfr or mpc at gmpy2's context precision, from the
    mpf's own digits (mpmath.mpf(x) would round them to mpmath's working precision first); a gmpy2
    number as it is."""
    if isinstance(x, mpmath.mpc):
        return gmpy2.mpc(to_gmpy(x.real), to_gmpy(x.imag))
    if isinstance(x, _GMPY_TYPES):
        return x
    sign, man, exp_, _ = (x if isinstance(x, mpmath.mpf) else mpmath.mpf(x))._mpf_
    if not man:
        return gmpy2.mpfr(0)
    return gmpy2.mul_2exp(gmpy2.mpfr(-man if sign else man), exp_)


def int_pair(mpf_tuple):
    """(signed mantissa, exponent) of a raw mpmath mpf tuple (``x._mpf_``)."""
    sign, man, exp_, _ = mpf_tuple
    return (-man if sign else man), exp_


def horner_pairs(coeffs, var, prec):
    """sum_k c_k var^k by Horner's rule; ``coeffs`` and ``var`` are (mantissa, exponent) pairs.

    The accumulator is truncated to ``prec`` bits only when it grows 32 bits beyond, and a term
    below the accumulator's last ``prec + 8`` bits is skipped; returns the (mantissa, exponent) pair.
    """
    vm, ve = var
    acc, e = 0, 0
    for cm, ce in reversed(coeffs):
        acc *= vm
        e += ve
        if acc == 0:
            acc, e = cm, ce
        elif cm:
            if ce >= e:
                acc += cm << (ce - e)
            elif abs(cm).bit_length() + ce > abs(acc).bit_length() + e - prec - 8:  # else negligible
                acc = (acc << (e - ce)) + cm
                e = ce
        bl = abs(acc).bit_length()
        if bl > prec + 32:
            acc >>= bl - prec
            e += bl - prec
    return acc, e

"""Exact-integer floating point for long series: values ``(mantissa, exponent)`` = mantissa 2^exponent.

mpmath's mpf arithmetic normalises after every operation; Horner's rule on Python integers with a
lazily normalised binary exponent costs one big-integer multiply, one shift and one add per step
(about 10x cheaper) with the rounding of ``prec``-bit floating point per step.
"""

__all__ = ["int_pair", "horner_pairs"]


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

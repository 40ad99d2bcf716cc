"""Error-free transformations of floating-point sums and products (Knuth, Dekker).

Elementwise on floats and numpy arrays alike: ``two_sum(a, b) = (s, e)`` and
``two_product(a, b) = (p, e)`` with s + e = a + b and p + e = a b exactly (barring overflow), the
building blocks of double-double arithmetic. No fused multiply-add is needed: Dekker's product
splits each factor into two 26-bit halves (the 2^27 + 1 splitter).
"""

__all__ = ["two_product", "two_sum"]

_SPLIT = 134217729.0  # 2^27 + 1


def two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_product(a, b):
    """(p, e) with p = fl(a b) and p + e = a b exactly (Dekker)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl

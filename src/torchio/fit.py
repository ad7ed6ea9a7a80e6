"""Expressions over shape symbols from integer samples.

`fit_dim` finds one tensor dimension as an expression: a constant, an
affine or floored-affine function of one symbol (`H - 2`, `2*D - 1`,
`floor((2*D - 1)/4)`: convolution and pooling output sizes), or a rational
multiple of a product of symbols (a flattened dimension). `fit_polynomial`
interpolates a count (flops) exactly on a grid of multiples of the base
sizes, one symbol's degree found at a time, as a polynomial with rational
coefficients. Expressions are sympy objects; `render` prints them in the
operator YAML's dialect (`^`, `floor`).
"""
import itertools
import math
from fractions import Fraction

import sympy


class FitError(Exception):
    pass


def sym(name):
    return sympy.Symbol(name, positive=True, integer=True)


def _floored_affine(points):
    """(a, b, c) with floor((a*x + b)/c) == y at every (x, y), c smallest."""
    (x0, y0), (x1, y1) = min(points), max(points)
    if x1 == x0:
        return None
    slope = Fraction(y1 - y0, x1 - x0)
    for c in range(1, 17):
        for a in {math.floor(slope * c), math.ceil(slope * c)}:
            lo = max(c * y - a * x for x, y in points)
            hi = min(c * y - a * x + c - 1 for x, y in points)
            if lo <= hi:
                b = 0 if lo <= 0 <= hi else (lo if abs(lo) < abs(hi) else hi)
                return a, b, c
    return None


def fit_dim(samples, symbols):
    """samples: [(binding {symbol: int}, value)], the first at the base point
    and the others varying one symbol each (then a joint point last).
    symbols: the symbol names. Returns a sympy expression."""
    base_binding, base_value = samples[0]
    depends = [s for s in symbols
               if any(b[s] != base_binding[s] and v != base_value
                      for b, v in samples if all(b[t] == base_binding[t] for t in symbols if t != s))]
    if not depends:
        expr = sympy.Integer(base_value)
    elif len(depends) == 1:
        s = depends[0]
        pts = sorted({(b[s], v) for b, v in samples if all(b[t] == base_binding[t] for t in symbols if t != s)})
        f = _floored_affine(pts)
        if f is None:
            raise FitError(f"no floor((a*{s} + b)/c) form through {pts}")
        a, b, c = f
        expr = (a * sym(s) + b) if c == 1 else sympy.floor((a * sym(s) + b) / sympy.Integer(c))
    else:
        prod = math.prod(base_binding[s] for s in depends)
        coef = Fraction(base_value, prod)
        expr = sympy.Rational(coef.numerator, coef.denominator) * sympy.Mul(*[sym(s) for s in depends])
    for b, v in samples:
        if evaluate(expr, b) != v:
            raise FitError(f"{render(expr)} gives {evaluate(expr, b)} at {b}, the model gives {v}")
    return expr


def evaluate(expr, binding):
    val = expr.subs({sym(k): v for k, v in binding.items()})
    return int(val) if val.is_integer else float(val)


def fit_polynomial(count, base, max_degree=3, max_points=1024):
    """count(binding) -> int, a polynomial in the symbols of `base` (their
    base values) at multiples of the base values; returns (expr, calls)."""
    names = list(base)
    degrees = {}
    calls = 0
    for s in names:
        ys = []
        for k in range(1, max_degree + 3):
            ys.append(count({**base, s: base[s] * k}))
            calls += 1
        # The degree is the number of non-zero finite differences.
        d, diffs = 0, ys
        while any(diffs) and d <= max_degree + 1:
            diffs = [b - a for a, b in zip(diffs, diffs[1:])]
            d += 1
        degree = d - 1 if d else 0
        if degree > max_degree:
            raise FitError(f"the count grows faster than {s}^{max_degree}")
        degrees[s] = degree
    grid = [range(1, degrees[s] + 2) for s in names]
    if math.prod(len(g) for g in grid) > max_points:
        raise FitError(f"too many sample points ({math.prod(len(g) for g in grid)}) to interpolate the count")
    expr = sympy.Integer(0)
    for ks in itertools.product(*grid):
        value = count({s: base[s] * k for s, k in zip(names, ks)})
        calls += 1
        term = sympy.Integer(value)
        for s, k, g in zip(names, ks, grid):
            x = sym(s) / base[s]  # in units of the base value
            for j in g:
                if j != k:
                    term *= (x - j) / sympy.Integer(k - j)
        expr += term
    return sympy.factor(sympy.expand(expr)), calls


def render(expr):
    """The expression in kevolve's dialect (config/operators/README.md)."""
    text = sympy.sstr(expr, order="grlex")
    return text.replace("**", "^")

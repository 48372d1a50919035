"""Golden-section search for the scripts that fit one constant by running the simulator
(scripts/fit-kernel-efficiency, scripts/fit-request-overhead): each cost is a run, so the search
spends one evaluation per step and narrows [lo, hi] by the golden ratio until it is under `tol`."""
import math
from typing import Callable


def minimize(cost: Callable[[float], float], lo: float, hi: float, tol: float) -> float:
    """The middle of the last bracket of a golden-section search for the minimum of `cost` on
    [lo, hi] (one minimum assumed), once the bracket is narrower than `tol`."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = cost(a), cost(b)
    while hi - lo > tol:
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = cost(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = cost(b)
    return (lo + hi) / 2.0

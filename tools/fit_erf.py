#!/usr/bin/env python3
# kiln/tools/fit_erf.py — the polynomial coefficients of codegen_cpu/llvm_vecmath.cpp's erf and
# exp, fitted for relative error with numpy (least squares reweighted toward minimax), and the
# float error of each fit estimated in float32 arithmetic. Run with any python that has numpy:
#   python3 tools/fit_erf.py
import math

import numpy as np

f32 = np.float32


def fit(x, y, basis, scale=None, iterations=40):
    """Coefficients c minimizing max |basis @ c - y| / |scale| (scale defaults to y), by
    least squares iteratively reweighted toward the largest errors."""
    scale = np.abs(y if scale is None else scale)
    w = 1.0 / scale
    c = np.linalg.lstsq(basis * w[:, None], y * w, rcond=None)[0]
    for _ in range(iterations):
        err = np.abs(basis @ c - y) / scale
        w = w * np.sqrt(1 + 3 * err / err.max())
        c = np.linalg.lstsq(basis * w[:, None], y * w, rcond=None)[0]
    return c, (np.abs(basis @ c - y) / scale).max()


def horner32(c, v):
    r = f32(c[-1])
    for k in reversed(c[:-1]):
        r = f32(float(r) * float(v) + float(f32(k)))  # one rounding per step, as an FMA
    return r


def ulps(a, b):
    return abs(int(np.array(f32(a)).view(np.int32)) - int(np.array(f32(b)).view(np.int32)))


SPLIT, END = 0.85, 3.95
MID, HALF = (SPLIT + END) / 2, (END - SPLIT) / 2
erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)

# |x| < SPLIT: erf(x) = x P(x^2), P of degree 6.
x = np.linspace(0, SPLIT, 20001)[1:]
cA, eA = fit(x, erf(x) / x, np.vander(x * x, 7, increasing=True))
# SPLIT <= |x| < END: erf(x) = 1 - exp(-x^2) Q(u), u = (|x| - MID) / HALF, Q of degree 12 fitting
# erfc(x) exp(x^2).
x = np.linspace(SPLIT, END, 40001)
cB, eB = fit(x, erfc(x) * np.exp(x * x), np.vander((x - MID) / HALF, 13, increasing=True))
# exp(r) = 1 + r + r^2 (c2 + ... + c6 r^4) on |r| <= ln2/2.
r = np.linspace(-math.log(2) / 2 * 1.0005, math.log(2) / 2 * 1.0005, 200001)
cE, eE = fit(r, np.exp(r) - 1 - r, np.vander(r, 5, increasing=True) * (r * r)[:, None], scale=np.exp(r))

print("erf near (x P(x^2)):", [float(f32(v)) for v in cA], f"relative error {eA:.2e}")
print("erf far (Q(u)):", [float(f32(v)) for v in cB], f"relative error {eB:.2e}")
print("exp (c2..c6):", [float(f32(v)) for v in cE], f"relative error {eE:.2e}")

worst = 0
for xv in np.linspace(0, END, 200001, dtype=np.float32):
    xv = f32(xv)
    if xv < SPLIT:
        y = f32(float(xv) * float(horner32(cA, f32(xv * xv))))
    else:
        u = f32(float(f32(xv - f32(MID))) * float(f32(1 / HALF)))
        g = f32(math.exp(float(f32(-xv * xv))))
        y = f32(1.0 - float(g) * float(horner32(cB, u)))
    worst = max(worst, ulps(y, math.erf(float(xv))))
print(f"erf in float32 arithmetic: max {worst} ulp on [0, {END}]")

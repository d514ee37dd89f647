#!/usr/bin/env python3
"""Exact values of the named bounds of src/numeric/tolerance.cpp on the inputs
tests/numeric/test_tolerance.cpp pins them at: each formula evaluated in exact
rationals (mpmath at 200 digits where a square root or an exponential enters),
with u = 2^-53, printed rounded once to double (17 significant digits).
Rerun after changing a formula and compare with the test's literals."""
from fractions import Fraction as F

import mpmath

mpmath.mp.dps = 200
U = F(1, 2**53)


def mp(x):
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, F) else mpmath.mpf(x)


def gamma(n, u=U):
    nu = n * u
    return nu / (1 - nu)


def bef(ops):
    return 1 + gamma(ops + 1)


def qr(kappa, rows, cols, ratio):
    eps = mpmath.sqrt(cols) * mp(gamma(16 * rows * cols))
    ke = kappa * eps
    return ke / (1 - ke) * (2 + (kappa + 1) * mp(ratio)) * mp(bef(8))


def show(name, value):
    print(f"{name:48s} {float(value) if isinstance(value, F) else float(mpmath.mpf(value)):.17g}")


eps = F(3e-3)  # the double nearest 3e-3, exactly
values = {
    "bound_evaluation_factor(9) - 1": gamma(10),
    "reference_relative_error(128, 1000)": gamma(1000, F(1, 2**128)),
    "head_reorder_bound(2, 3, 4, 5.0)": 2 * gamma(5) * 5 * (1 + gamma(2 * 4 + 3 + 2 + 8)),
    "squared_loss_from_forward_bound(0.25, 0.5, 0, 6)": (F(1, 4) + F(1, 4)) * (1 + gamma(12)),
    "squared_loss_from_forward_bound(0, 0, 2, 6)": gamma(8) * 2 * (1 + gamma(12)),
    "least_squares_fit_bound(10, 100, 4, 2, 1, 4)": 2 * qr(10, 100, 4, F(1, 8)),
    "jacobi_singular_value_bound(10, 3)": gamma(4800) / (1 - gamma(4800)) * (1 + gamma(4)),
    "reference_in_double_relative(40, 1000)": (2 * U + (1 + U) * gamma(1000, F(1, 2**40))) * (1 + U) * bef(5),
    "dot_product_reorder(10)": 2 * gamma(10),
    "reference_reorder(128, 1000)": 2 * gamma(1000, F(1, 2**128)),
    "scaled_copy_relative_error(3e-3, 256)": (3 * U * (1 + eps) + eps * (2 * gamma(257) + U)) * bef(8),
    "rescaled_norm_relative(256)": gamma(516),
    "monte_carlo_frequency_margin(0.25, 10000)": 5 * mpmath.sqrt(mpmath.mpf(3) / 16 / 10000),
}
logit = F(1e-3)
E = (2 * logit + U * (10 + 2 * logit)) * bef(4)
values["double_softmax_relative_error(1e-3, 10, 3)"] = (
    (1 + mpmath.expm1(2 * mp(E))) * mp(1 + gamma(8)) - 1) * mp(bef(4))


# Label noise (proofs/certification.md, "Label noise"; proofs/label_noise.md).
def chi_q(n, t):
    return (n + 2 * mpmath.sqrt(mpmath.mpf(n) * t) + 2 * t) * mp(bef(8))


t = mpmath.log(2 / mp(F(1e-12)))
values["chi_square_tail_quantile(16, 3)"] = chi_q(16, 3)
eps_noise = mp(F(1e-4))
values["label_noise_row_bound(1e-4, 5, 2, 16, 1e-12)"] = (
    eps_noise * 5 * mpmath.sqrt(chi_q(16, t)) / (mpmath.sqrt(32) - eps_noise * mpmath.sqrt(chi_q(32, t))) * mp(bef(24)))
values["float32_label_rounding_row_bound(3, 16)"] = (
    (F(1, 2**24) * 3 + 4 * F(1, 2**150)) / (1 - F(1, 2**24)) * bef(6))
values["residual_rounding_level(1e-28, 4)"] = mpmath.sqrt(mp(F(1e-28)) / 4) * mp(bef(4))
values["noise_estimate_band(16384, 1024, 2)"] = 6 * mpmath.sqrt(mpmath.mpf(4) / (16384 - 1024))
# Polishing's iteration on two paths (proofs/attention_jacobian.md, "polish.cpp's gradient on two paths").
def projection_distance(e, sigma):
    return e / (sigma - e) * bef(2)


g_h = gamma(16 * 100 * 4)
eps_q = 2 * g_h  # sqrt(4) * γ̃
values["attention_jacobian_relative(3, 4, 2.0)"] = gamma(2 * 4 + 2 * 3 + 8) * 9
values["projection_distance(1e-3, 0.5)"] = projection_distance(F(1e-3), F(1, 2))
values["householder_projection_distance(100, 4, 1e-3, 10, 0.5)"] = (
    (2 * eps_q + eps_q**2 + projection_distance(F(1e-3) + g_h * (10 + F(1e-3)), F(1, 2))) * bef(8))
values["householder_projection_rounding(100, 4, 3)"] = (
    (gamma(105) * (1 + 4 * (1 + g_h)**2) + gamma(300) * (1 + 2 * eps_q + eps_q**2)) * bef(12))
values["projected_residual_error(2, 1e-3, 1e-4)"] = ((1 + F(1e-4)) * F(1e-3) + F(1e-4) * 2) * bef(4)
values["polish_gradient_bound(1e-10, 1e-12, 3, 5, 2, 1e-3, 1e-13)"] = (
    F(1e-10) + (F(1e-12) * 5 + 3) * F(1e-3) + F(1e-13) * (1 + F(1e-12)) * 5 * (2 + F(1e-3))) * bef(12)


for name, value in values.items():
    show(name, value)

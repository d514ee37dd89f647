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



# Issue "The checker checked": the bounds that had no pinning test, and the edges.
def sqrt(x):
    return mpmath.sqrt(mp(x))


edges = {}
values["svd_backward_error(100, 4)"] = (gamma(9) + gamma(6400) + gamma(256)) * bef(8)
values["streamed_svd_backward_error(100, 4, 2, 1e-12)"] = (
    mp(gamma(9) + gamma(64 * 5 * 100) + 2 * gamma(256) + 2 * gamma(1920 * 4) + gamma(16 * 4 * 2) + gamma(4))
    + sqrt(2) * mp(F(1e-12))) * mp(bef(16))
# ρ below 2^-40: the accepted floor 2^-40 is used instead.
values["streamed_svd_backward_error(100, 4, 2, 0)"] = (
    mp(gamma(9) + gamma(64 * 5 * 100) + 2 * gamma(256) + 2 * gamma(1920 * 4) + gamma(16 * 4 * 2) + gamma(4))
    + sqrt(2) * mp(F(1, 2**40))) * mp(bef(16))
values["singular_subspace_sin_bound(1e-3, 0.1, 2, 4)"] = (
    mp(F(1e-3) / (F(0.1) - F(1e-3))) + sqrt(2) * mp(gamma(256))) * mp(bef(8))
# gap one part in 10^6 above ε: the bound is ~10^6, finite (gap → ε from above).
gap_near = F(1e-3 * (1 + 2**-20))  # the double the test passes
values["singular_subspace_sin_bound(1e-3, 1e-3(1 + 2^-20), 2, 4)"] = (
    mp(F(1e-3) / (gap_near - F(1e-3))) + sqrt(2) * mp(gamma(256))) * mp(bef(8))
values["min_norm_solution_bound(10, 20, 3, 2)"] = (
    mp(10 * gamma(16 * 20 + 6)) / (1 - mp(10 * gamma(16 * 20 + 6))) * 3 * 2 * mp(bef(8)))
values["polish_operator_relative(100, 2)"] = gamma(100) * 9


def hull_point(eps, s_max, s_kept, s_drop, sin_kept, x0, res, c, rows, cols, kept):
    eps, s_max, s_kept, s_drop, sin_kept, x0, res, c = map(mp, (eps, s_max, s_kept, s_drop, sin_kept, x0, res, c))
    cos_kept = mpmath.sqrt((1 - sin_kept) * (1 + sin_kept))
    tan_kept = sin_kept / cos_kept
    delta_d = (s_drop * sin_kept + eps) / cos_kept
    kappa = s_max / s_kept
    ke = kappa * delta_d / s_max
    ls = ke / (1 - ke) * (2 * x0 + (kappa + 1) * res / s_max) * mp(bef(10))
    delta_c = mp(gamma(cols + 5)) * c / (s_kept - eps)
    dw = ls + delta_c
    orth = mpmath.sqrt(cols) * mp(gamma(16 * cols * cols))
    evaluation = mp(gamma(16 * rows * cols + 2 * cols)) * mpmath.sqrt(kept) * c / (s_kept - eps)
    return (tan_kept * (x0 + dw) + dw + orth * (x0 + dw) + evaluation) * mp(bef(24))


values["hull_point_bound(1e-6, 10, 1, 0.01, 1e-3, 2, 0.5, 3, 100, 4, 2)"] = hull_point(
    F(1e-6), 10, 1, F(0.01), F(1e-3), 2, F(1, 2), 3, 100, 4, 2)
values["label_noise_power_band(1000, 16, 2)"] = 6 * sqrt(F(2, 16) * 2 / 1000)
jac33 = gamma(16 * 9 + 30 * 16 * 9) / (1 - gamma(16 * 9 + 30 * 16 * 9)) * (1 + gamma(4))
values["principal_angle_error(3, 10)"] = mp(mpmath.pi) / mpmath.sqrt(2) * sqrt(2 * (3 * gamma(10) + jac33 + U))
values["hull_distance_rounding(100, 4, 10, 0.5, 2, 1)"] = (
    gamma(400) * 10 * 2 / F(1, 2) + gamma(8) * 3) * bef(8)
# Zero norms: a residual and its error both 0 give the bound 0 exactly.
values["objective_from_residual_bound(0, 0, 8, 100)"] = F(0)
values["certification_residual_bound(3, 0, 0, 0, 0, 2, 4)"] = F(0)

# The iterative centre (Lemma 3.2.9) and stage 5 by membership queries.
values["iterative_eigen_residual_bound(1e-10, 1000, 8, 64, 5, 3)"] = (
    mp(F(1e-10)) + mpmath.sqrt(5) * mp(gamma(1000 + 16 + 8) + gamma(16 * 64 * 5)) + 3 * mp(gamma(64 + 5))) * 9 * mp(bef(12))
values["iterative_point_backward_error(1e-10, 1000, 8, 64, 3, 2, 0.5, 0.25)"] = (
    (F(1e-10) + gamma(64 + 5)) * 3 + gamma(1000 + 16 + 8) * (3 * 2 + 9 * F(1, 2)) / F(1, 4)) * bef(12)
values["membership_excess_evaluation_error(64, 2, -0.5, 0.01)"] = (
    gamma(66) * (2 + F(1, 2)) + U * F(0.01)) * bef(8)
values["optimum_two_paths_bound(-1e-9, 1e-8, 1e-12)"] = (0 + F(1e-8) + F(1e-12)) * bef(4)
values["optimum_two_paths_bound(1e-9, 1e-8, 1e-12)"] = (F(1e-9) + F(1e-8) + F(1e-12)) * bef(4)
values["membership_hull_point_bound(1e-6, 3, 64, 1)"] = (F(1e-6) + gamma(2 * 64 + 1) * 2) * 3 * bef(6)

# Stage 5's reference at 64 bits (the pins' precision, where every term shows in the double).
U64 = F(1, 2**64)
values["span_reference_value_error(100, 4, 64, 3)"] = mpmath.sqrt(mp((gamma(100, U64) + gamma(256, U64)) * 9))
values["span_reference_angle_error(4, 64, 3, 2, 1)"] = (gamma(4, U64) + gamma(256, U64)) * 9 / (4 - 1)
values["span_reference_point_error(100, 4, 64, 10, 2)"] = gamma(100 + 256, U64) * 100 * 2
values["rank_threshold_error(4, 0.5, 3)"] = mp(4) * mp(2) ** -52 * mp("0.5") + mp(2) ** -53 * 3

# Polishing's samples: the held-out residual a fit at its optimum leaves (statistical).
values["heldout_residual_limit(2e-12, 5e-15, 8192, 1024, 8192)"] = mp(F(2e-12)) * mpmath.sqrt(
    (1 + mpmath.mpf(1024) / 8192) * (1 + 6 * mpmath.sqrt(mpmath.mpf(8) / 8192)) / (1 - 6 * mpmath.sqrt(mpmath.mpf(8) / (8192 - 1024))))

for name, value in values.items():
    show(name, value)

#!/usr/bin/env python3
"""Mutation testing of the verdict code (docs/mutation.md records the runs).

Generated mutants (the default): every mutation site of the verdict code
(SCOPE below) found by libclang and rewritten by the operators of
scripts/mutation_schema.py — relational operators flipped and negated (including
`!(a <= b)` → `a > b`), constants ×10 and ×0.1, terms dropped, branches swapped,
loop bounds ± 1 — all mutants of a file in one *schema* compiled once, in a copy of
the tree built in its own folder; `MHALEARN_MUTANT=<id>` picks one at run time.
Each mutant is run against the fast targeted tests of its file first (TARGETED:
the verdict code's own binary `verdict_tests`, Catch2 specs), and against the full
unit and property suites only when those pass. EQUIVALENT names the mutants
that cannot change any result, each with the reason.

  scripts/mutation_check.py --list                 the mutants, by file and operator (no build)
  scripts/mutation_check.py --run [--full] [--files F,...] [--work DIR]
                                                   build the schema tree, run every mutant, write
                                                   DIR/results.json; --full puts the survivors of the
                                                   targeted tests through unit_tests and property_tests
                                                   [--survivors] [--limit N]: only the survivors of an
                                                   earlier run judged again (after new tests); at most N mutants
  scripts/mutation_check.py --report [--work DIR[,DIR...]]
                                                   the table of docs/mutation.md from results.json (of several
                                                   runs: each mutant's latest result, by key, where its file's
                                                   source is the last run's)
  scripts/mutation_check.py --self-test            the generator on a small file: each operator's
                                                   mutants, the schema compiled and selected (CTest)

Named faults (the fixed list the project started with, and issue 54's five):

  scripts/mutation_check.py --named [--build build/release] [--only M3,F7,N1]
  scripts/mutation_check.py --check-snippets       every named snippet still in its file (CTest)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The verdict code: the comparisons, the bounds, every stage's check, verify, and the
# learner's reference step.
SCOPE = ["src/numeric/comparison.cpp",
         "src/stages/stage1/check.cpp", "src/stages/stage2/check.cpp", "src/stages/stage2/body_check.cpp",
         "src/stages/stage3/check.cpp", "src/stages/stage3/selection_check.cpp", "src/stages/stage5/check.cpp",
         "src/stages/stage6/check.cpp", "src/stages/stage6/net_check.cpp", "src/stages/polish/check.cpp",
         "src/verify/verify.cpp", "src/verify/faults.cpp", "src/learn/reference_checks.cpp",
         "src/numeric/tolerance.cpp"]

# The tests a mutant meets: the test cases that reach its site (each program's test
# cases run once with the schema's coverage trace, MHALEARN_MUTANT_TRACE), fastest
# first — those of `verdict_tests` (the verdict code's own small binary, tests/numeric/
# and tests/verify/) first, those of `unit_tests` and `property_tests` (the full
# suites; the verdict tests' cases they repeat are not run again) only when the mutant
# survives them. A test that never reaches a site cannot tell its mutant from the
# original program.
TARGETED_PROGRAM = "verdict_tests"
FULL_PROGRAMS = ("unit_tests", "property_tests")
TIMEOUT_FACTOR, TIMEOUT_FLOOR = 10, 60  # a test's timeout: 10 times its time without a mutant, at least 60 s

_THREADS = ("the thread count of a draw: each sample's inputs and labels are computed on their own, the same "
            "bytes for any count (tests/model/test_forward.cpp; 0 threads is OpenMP's default count)")
_POLISH_THREADS = ("polishing's thread count: polish_iteration gives the same bytes for any count "
                   "(tests/stages/test_polish.cpp, \"the same bytes on 1 and 2 threads\"; 0 is OpenMP's default count)")
_POLISH_W = ("verify's polishing start: the perturbation of the W_i only; polish_iteration replaces the start's "
             "W by W(Θ) (stages/polish/polish.hpp), so no W of the start reaches the polish row")
_MPFR_TERM = ("a change inside the MPFR reference's own error term of a membership band, (n + c)·2^-bits·S with "
              "bits >= 128, beside the double band >= u·S: below half an ulp of it for n < 2^21, so the band "
              "rounds to the same double")

# Mutants that cannot change any result, by their key (file|function|operator|original|
# replacement|n, as --list prints it), each with the reason.
EQUIVALENT = {
    # comparison.cpp
    "src/numeric/comparison.cpp|items_undecided|relational-flip|c.compared > 0|(c.compared) >= (0)|1":
        "items_undecided is called only by verdict(part), after `p.compared == 0` has returned \"not compared\"",
    "src/numeric/comparison.cpp|record|relational-negate|!(difference <= item_bound)|(difference) > (item_bound)|1":
        "both operands are finite here: a finite difference against a bound that is not finite returned "
        "undecided above, and a difference that is not finite disagrees by the `|| !std::isfinite(difference)` "
        "of the same line (the NaN case N1 needs both changes)",
    "src/numeric/comparison.cpp|side_of|relational-negate|!(band >= 0)|(band) < (0)|1":
        "differs only for a NaN band, which the next line's `!(|value - threshold| > band)` also returns "
        "as undecided",
    "src/numeric/comparison.cpp|side_of|relational-negate|!(std::abs(value - threshold) > band)|(std::abs(value - threshold)) <= (band)|1":
        "value and threshold are finite and band is not NaN here (the line above), so |value - threshold| "
        "(+inf at worst, on overflow) and band are ordered: `!(a > b)` is `a <= b`",
    "src/numeric/comparison.cpp|side_of|relational-flip|value > threshold|(value) >= (threshold)|1":
        "reached only when |value - threshold| > band >= 0, so value != threshold",
    'src/stages/stage2/body_check.cpp|exit_along|relational-flip|c1 > 0|(c1) >= (0)|1':
        "c1 == 0 was skipped by the `continue` just above, so c1 > 0 and c1 >= 0 agree",
    'src/stages/stage2/body_check.cpp|exit_along|constant-x10|1|(1 * 10)|1':
        "the ball's exit index -1 made -10: it is only ever tested as `e.slab >= 0`",
    'src/numeric/tolerance.cpp|slab_width_difference_bound|relational-negate|!(w_lo > d_hi)|(w_lo) <= (d_hi)|1':
        "differs only for a NaN operand: w_lo = w − v_error and d_hi = δ + δ_error are differences and sums of "
        "finite arguments (checked above), never NaN (an overflow gives ±∞, which both forms compare alike)",
    # guards `!(x < c)` of bounds whose operands are finite (checked on entry): `x >= c` differs only for NaN
    **{f'src/numeric/tolerance.cpp|{fn}|relational-negate|{orig}|{rep}|1':
       "differs only for a NaN operand, and its operands are products or values of arguments checked finite on "
       "entry (a product of finite doubles is finite or ±∞, never NaN)"
       for fn, orig, rep in (("least_squares_perturbation_bound", "!(ke < 1.0)", "(ke) >= (1.0)"),
                             ("singular_subspace_sin_bound", "!(gap > eps)", "(gap) <= (eps)"),
                             ("hull_point_bound", "!(sin_kept < 1.0)", "(sin_kept) >= (1.0)"),
                             ("hull_point_bound", "!(s_kept > eps)", "(s_kept) <= (eps)"))},
    **{f'src/numeric/tolerance.cpp|{fn}|relational-negate|{orig}|{rep}|1':
       "differs only for a NaN operand, and its operands are arguments checked finite on entry, or values made of "
       "them that are finite or ±∞ (never NaN)"
       for fn, orig, rep in (("projection_distance", "!(design_error < sigma_min)", "(design_error) >= (sigma_min)"),
                             ("normal_equations_projection_error", "!(sigma_min > 0)", "(sigma_min) <= (0)"),
                             ("label_noise_row_bound", "!(spread <= 0.5 * std::sqrt(entries))", "(spread) > (0.5 * std::sqrt(entries))"),
                             ("residual_rounding_level", "!(label_sq_sum > 0)", "(label_sq_sum) <= (0)"),
                             ("iterative_point_backward_error", "!(residual_min > 0)", "(residual_min) <= (0)"),
                             ("heldout_residual_limit", "!(noise_train >= 0)", "(noise_train) < (0)"),
                             ("heldout_residual_limit", "!(rounding_level >= 0)", "(rounding_level) < (0)"),
                             ("heldout_residual_limit", "!(b_train < 1)", "(b_train) >= (1)"))},
    'src/numeric/tolerance.cpp|heldout_residual_limit|relational-flip|entries <= 0|(entries) < (0)|1':
        "at entries = 0 (parameters ≥ 0, checked on the same line) noise_estimate_band gives b_train = +∞, and "
        "the function returns +∞ two lines below: the value of the guard",
    'src/numeric/tolerance.cpp|heldout_residual_limit|relational-flip|heldout_entries <= 0|(heldout_entries) < (0)|1':
        "at heldout_entries = 0 noise_estimate_band gives b_heldout = +∞, and the function returns +∞ two lines "
        "below: the value of the guard",
    'src/numeric/tolerance.cpp|heldout_residual_limit|relational-flip|b_train < 1|(b_train) <= (1)|1':
        "at b_train = 1 the mutant divides (1 + share)(1 + b_heldout) > 0 by 1 − b_train = 0: +∞, the guard's value",
    'src/numeric/tolerance.cpp|objective_from_residual_bound|term-dropped|2.0 * g + u + g * u|(2.0 * g + u)|1':
        "γu is below half an ulp of fl(2γ + u) (γu < u(2γ + u)/2 ≤ half its ulp, for γ < 1/2), so adding it to that "
        "double rounds back to it: the sum is the same double with or without the term",
    'src/numeric/tolerance.cpp|certification_solution_bound|relational-negate|!(e < s)|(e) >= (s)|1':
        "differs only when e or s is NaN; with finite inputs e = (γ_d + γ_{3k+1})‖B‖_F² is a positive γ (d, k "
        "are ints, far below 1/u) times a finite or +∞ square, and s = σ_min² is finite or +∞: never NaN",
    'src/numeric/tolerance.cpp|hull_point_bound|constant-x10|1.0|(1.0 * 10)|1':
        "sin θ in [1, 10) passes the mutant's guard, but then cos θ = √((1 − sin)(1 + sin)) is 0 or NaN, δ_D is "
        "+∞ or NaN, least_squares_perturbation_bound returns +∞ (its finite() guard) and the next line kInf: "
        "the guard's value",
    'src/numeric/tolerance.cpp|hull_point_bound|relational-flip|sin_kept < 1.0|(sin_kept) <= (1.0)|1':
        "at sin θ = 1 the mutant goes on to cos θ = 0 and an infinite δ_D, which least_squares_perturbation_bound "
        "returns as +∞ and the next line as kInf: the value the guard returns",
    'src/numeric/tolerance.cpp|qr_least_squares_relative_bound|relational-flip|ke < 1.0|(ke) <= (1.0)|1':
        "at κε = 1: ke/(1 − ke) = +∞ times 2 + (κ + 1)·r ≥ 2 (r a ratio of norms, ≥ 0) is the +∞ the guard returns",
    'src/numeric/tolerance.cpp|gamma|relational-flip|nu < 1.0|(nu) <= (1.0)|1':
        "gamma at nu = 1 exactly: nu/(1 - nu) = 1/0 is +inf, the value the other branch returns",
    # stage 2's body: which test points and directions (compare_membership, compare_widths). The check
    # compares the two bodies at whatever points it is given; these mutants pick other points the
    # specification admits equally (docs/mutation.md, "equivalent as checks"), not a different verdict rule.
    'src/stages/stage2/body_check.cpp|exit_along|relational-flip|s < e.s|(s) <= (e.s)|1':
        "a tie of two slabs' exits along a ray: both bind at the same point, and either one's band places the "
        "ray's test points as the specification asks (the later slab instead of the earlier)",
    'src/stages/stage2/body_check.cpp|exit_along|relational-flip|s_ball < e.s|(s_ball) <= (e.s)|1':
        "a tie of the ball's exit with a slab's along a ray: both bind at the same point, and either one's band "
        "places the ray's test points as the specification asks",
    **{f'src/stages/stage2/body_check.cpp|compare_membership|{op}|{orig}|{rep}|1':
       "the rays' origin: the fast body's least-squares centre with m free directions, or none, instead of "
       "m − 1; any point serves as the origin of rays to the fast body's boundary, where the test points are placed"
       for op, orig, rep in (("constant-x10", "1", "(1 * 10)"), ("constant-x0.1", "1", "(1 / 10)"),
                             ("term-dropped", "m - 1", "(m)"))},
    **{f'src/stages/stage2/body_check.cpp|{fn}|{op}|{orig}|{rep}|1':
       "another stream index of the Gaussian test directions (still one distinct index per direction): "
       "directions from the same distribution, which is what the check specifies"
       for fn, op, orig, rep in (("compare_membership", "constant-x10", "100", "(100 * 10)"),
                                 ("compare_membership", "constant-x0.1", "100", "(100 / 10)"),
                                 ("compare_membership", "term-dropped", "100 + ray", "(ray)"),
                                 ("width_directions", "constant-x10", "200", "(200 * 10)"),
                                 ("width_directions", "constant-x0.1", "200", "(200 / 10)"),
                                 ("width_directions", "term-dropped", "200 + i", "(i)"))},
    **{f'src/stages/stage2/body_check.cpp|compare_membership|constant-x0.1|0.25|(0.25 * 0.1)|{n}':
       "the points meant to be undecided, at ∓1/40 of the band instead of ∓1/4: any offset below one band is "
       "within the reference's band at that point (the band varies by a relative ~u along the ray), so both are "
       "undecided and the part's counts are the same"
       for n in (1, 2)},
    'src/stages/stage2/body_check.cpp|compare_widths|logical-swap|hi.status == ExactStatus::optimal && lo.status == ExactStatus::optimal|(hi.status == ExactStatus::optimal) || (lo.status == ExactStatus::optimal)|1':
        "the exact maximum and minimum of one linear function over the same body (slabs within the box "
        "|θ_c| ≤ R, bounded): both optimal or both infeasible, never one of each, so && and || agree",
    # stage 5's iterative comparison at m − 1 ≥ n: an iterative centre exists only for
    # n ≥ 8(min(n, 2(m − 1) + 3) + guard vectors) (convex_body_centre_iterative.cpp, iterative_centre),
    # so every iterative result has m − 1 < n and the edge is never reached by what the fast path returns
    'src/stages/stage5/check.cpp|compare_iterative_directions|relational-flip|p >= n|(p) > (n)|1':
        "p = m − 1 = n is never an iterative result's: iterative_centre returns nothing unless n ≥ 8(2p + 3 + "
        "guards) > p, and otherwise the centre (and the result) is the streamed or dense method's",
    'src/stages/stage5/check.cpp|check_iterative_span|relational-flip|directions.compared > 0|(directions.compared) >= (0)|1':
        "the directions part compares nothing only for m = 1 (sin θ is set to 0 before this test is read) or "
        "p ≥ n, which no iterative result reaches (iterative_centre needs n ≥ 8(2p + 3 + guards)); its "
        "undecided branch counts one comparison",
    # stage 2's boundary points at ∓4 bands: decided points near the boundary, as the check specifies
    **{f'src/stages/stage2/body_check.cpp|compare_membership|constant-x10|4.0|(4.0 * 10)|{n}':
       "the decided points of each ray at ∓40 bands instead of ∓4: still decided, on the same sides (in any "
       "body more than 40 bands deep along the ray), so the part's counts are the same; and a fault they find (the fast boundary more than 5 bands from the "
       "reference's, along the ray) the ∓¼-band points of the same ray find too (more than 1¼ bands) "
       "(docs/mutation.md, \"equivalent as checks\")"
       for n in (1, 2)},
    # verify's and the learner's reference step: what they re-run, not how they decide
    **{f'src/verify/verify.cpp|verify_margin_options|{op}|{orig}|{rep}|1':
       "how much of stage 3 verify runs (its pilot, its budget, its accepted fraction): the row compares the "
       "fast fit with its reference on whatever events that run selects (docs/mutation.md, \"equivalent as checks\")"
       for op, orig, rep in (("constant-x10", "20000", "(20000 * 10)"), ("constant-x0.1", "20000", "(20000 / 10)"),
                             ("constant-x10", "4000000", "(4000000 * 10)"), ("constant-x0.1", "4000000", "(4000000 / 10)"),
                             ("constant-x10", "1e-3", "(1e-3 * 10)"))},
    'src/verify/verify.cpp|verify_instance|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/verify/verify.cpp|verify_instance|constant-x0.1|1|(1 / 10)|1': _THREADS,
    'src/learn/reference_checks.cpp|check_selected_round|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/learn/reference_checks.cpp|check_selected_round|constant-x0.1|1|(1 / 10)|1': _THREADS,
    **{f'src/learn/reference_checks.cpp|check_sculpt_run|term-dropped|options.sculpt.first_sample + static_cast<uint64_t>(result.pilot_samples)|{rep}|1':
       "which samples' rows the reference step certifies again (the run's, after its pilot, or others): the row "
       "runs the fast certification and its reference on the rows it draws, so it compares the two paths either way "
       "(docs/mutation.md, \"equivalent as checks\")"
       for rep in ("(options.sculpt.first_sample)", "(static_cast<uint64_t>(result.pilot_samples))")},
    'src/learn/reference_checks.cpp|check_proxy|bool-flipped|true|false|1':
        "check_proxy's early return when the large references are gated: its result is read only by "
        "check_span_of, which is gated by the same condition (large_references_fit) and returns before reading it",
    # a draw's thread count: every sample's inputs and labels are computed on their own, the same bytes
    # for any count (tests/model/test_forward.cpp, "bit-identical for any thread count"; 0 is OpenMP's default)
    'src/stages/stage2/check.cpp|certification_rows|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/stages/stage2/check.cpp|certification_rows|constant-x0.1|1|(1 / 10)|1': _THREADS,
    'src/stages/stage3/selection_check.cpp|compare_selection|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/stages/stage3/selection_check.cpp|compare_selection|constant-x0.1|1|(1 / 10)|1': _THREADS,
    'src/stages/stage3/selection_check.cpp|compare_selection|constant-x10|1|(1 * 10)|3': _THREADS,
    'src/stages/stage3/selection_check.cpp|compare_selection|constant-x0.1|1|(1 / 10)|3': _THREADS,
    'src/stages/stage3/selection_check.cpp|reference_margin|constant-x0.1|1|(1 / 10)|1':
        "the argmax loop started at b = 0 instead of 1: it compares logits[0] > logits[0] first, which is false",
    'src/stages/stage3/selection_check.cpp|compare_selection|relational-flip|prefix > 0|(prefix) >= (0)|1':
        "differs only at prefix 0, where the mutant draws an empty batch and loops over none of it "
        "(tests/verify/test_selection_check.cpp runs prefix 0 and sees the same part)",
    'src/stages/stage3/selection_check.cpp|compare_selection|constant-x10|1|(1 * 10)|2':
        "a later event's draw of 10 samples from e.sample instead of 1: only sample(0), the event's own sample, "
        "is read, and each sample's inputs are drawn on their own (the same bytes whatever the count)",
    'src/stages/stage5/check.cpp|decided_gap_dimension|constant-x0.1|1|(1 / 10)|7':
        "the decision loop started at j = 0: lo[0] stays 0 < min_gap (min_gap > 0), so j = 0 is skipped",
    'src/stages/stage5/check.cpp|decided_gap_dimension|constant-x0.1|1|(1 / 10)|8':
        "the separation loop started at i = 0: hi[0] stays 0 and lo[j] >= min_gap > 0 exceeds it",
    'src/stages/stage5/check.cpp|decided_kept_count|relational-flip|s(j) > threshold|(s(j)) >= (threshold)|1':
        "differs only at s(j) == threshold, which the line above has returned as undecided: |s(j) − threshold| = 0 "
        "is within e + e_threshold, a sum of errors (never negative)",
    'src/stages/stage5/check.cpp|value_error|relational-flip|s_hat > 0|(s_hat) >= (0)|1':
        "at ŝ = 0 both give √e for e > 0 (e/0 = +∞ loses the min); e is iterative_eigen_residual_bound, "
        "at least 3γ_{n+5}‖M‖_F² > 0 for a body with a slab, and an iterative centre has slabs",
    **{f'src/stages/stage5/check.cpp|check_iterative_span|{op}|{orig}|{rep}|2':
       "errors()'s `free` argument (m − 1, the second `m - 1` of check_iterative_span) is read only for a "
       "streamed centre; check_iterative_span runs for the iterative centre alone, whose errors use only "
       "the reference's term"
       for op, orig, rep in (("constant-x10", "1", "(1 * 10)"), ("constant-x0.1", "1", "(1 / 10)"),
                             ("term-dropped", "m - 1", "(m)"))},
    'src/stages/polish/check.cpp|accepted_step_band|constant-x0.1|1|(1 / 10)|1':
        "bound_evaluation_factor(0) and (1) are the same double, 1 + 2^-52 (1 + γ_1 and 1 + γ_2 both round to "
        "one ulp above 1)",
    'src/stages/stage6/check.cpp|w_design|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/stages/stage6/check.cpp|w_design|constant-x0.1|1|(1 / 10)|1': _THREADS,
    'src/stages/stage6/net_check.cpp|compare_net|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/stages/stage6/net_check.cpp|compare_net|constant-x0.1|1|(1 / 10)|1': _THREADS,
    'src/stages/stage6/net_check.cpp|compare_net|constant-x10|1|(1 * 10)|2': _THREADS,
    'src/stages/stage6/net_check.cpp|compare_net|constant-x0.1|1|(1 / 10)|2': _THREADS,
    'src/stages/polish/check.cpp|check_polish|constant-x10|1|(1 * 10)|1': _THREADS,
    'src/stages/polish/check.cpp|check_polish|constant-x0.1|1|(1 / 10)|1': _THREADS,
    # polishing's own thread count in the check: its iteration gives the same bytes for any count
    # (tests/stages/test_polish.cpp, "the same bytes on 1 and 2 threads"; 0 is OpenMP's default count)
    'src/stages/polish/check.cpp|check_polish|constant-x10|1|(1 * 10)|2': _POLISH_THREADS,
    'src/stages/polish/check.cpp|check_polish|constant-x0.1|1|(1 / 10)|2': _POLISH_THREADS,
    **{f'src/stages/stage2/check.cpp|check_certification|{op}|1.0|{rep}|1':
       "the bound given to a row whose v_bound is 0: compare_certification_row leaves v_bound 0 only on its "
       "early returns (duplicate tokens, rank decided), where v_difference stays 0 as well, and otherwise only "
       "for a zero row y (certification_solution_bound is 0 at y = v = 0 with no reference error), where both "
       "solves return v = 0 exactly: record(0, b) agrees for 1, 10 and 0.1 alike"
       for op, rep in (("constant-x10", "(1.0 * 10)"), ("constant-x0.1", "(1.0 * 0.1)"))},
    'src/verify/verify.cpp|perturbed|constant-x10|1|(1 * 10)|1': _POLISH_W,
    'src/verify/verify.cpp|perturbed|constant-x0.1|1|(1 / 10)|1': _POLISH_W,
    'src/verify/verify.cpp|perturbed|term-dropped|relative * h.w.norm()|(relative)|1': _POLISH_W,
    'src/verify/verify.cpp|perturbed|term-dropped|relative * h.w.norm()|(h.w.norm())|1': _POLISH_W,
    'src/verify/verify.cpp|perturbed|term-dropped|relative * h.w.norm() / dw.norm()|(relative * h.w.norm())|1': _POLISH_W,
    # the MPFR reference's own error in the membership bands: (n + 4)·2^-128·S beside a double band
    # of at least u·S (tolerance.cpp, slab_membership_band, ball_membership_band) is below half an
    # ulp of it for n < 2^21, so the band is the same double with or without it, or with it changed
    'src/stages/stage2/body_check.cpp|membership_side|constant-x10|4|(4 * 10)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|constant-x0.1|4|(4 / 10)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|n + 4|(n)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|n + 4|(4)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|abs_dot + std::abs(slabs[r].b)|(abs_dot)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|abs_dot + std::abs(slabs[r].b)|(std::abs(slabs[r].b))|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|abs_dot + std::abs(slabs[r].b) + slabs[r].eta|(abs_dot + std::abs(slabs[r].b))|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|abs_dot + std::abs(slabs[r].b) + slabs[r].eta|(slabs[r].eta)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|tol::slab_membership_band(abs_dot, std::abs(slabs[r].b), slabs[r].eta, n, rb.centre_bound, rb.width_bound, rb.normal_bound, theta_max) + tol::reference_relative_error(bits, n + 4) * (abs_dot + std::abs(slabs[r].b) + slabs[r].eta)|(tol::slab_membership_band(abs_dot, std::abs(slabs[r].b), slabs[r].eta, n, rb.centre_bound, rb.width_bound, rb.normal_bound, theta_max))|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|constant-x10|2|(2 * 10)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|constant-x0.1|2|(2 / 10)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|n + 2|(n)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|n + 2|(2)|1': _MPFR_TERM,
    'src/stages/stage2/body_check.cpp|membership_side|term-dropped|tol::ball_membership_band(norm, radius, n) + tol::reference_relative_error(bits, n + 2) * norm|(tol::ball_membership_band(norm, radius, n))|1': _MPFR_TERM,
}

# (id, file, old, new, what, unit_tests spec, property_tests spec or None)
MUTATIONS = [
    ("M1", "src/numeric/tolerance.cpp", "const double e = gamma(16 * rows * cols + 30 * 16 * cols * cols);",
     "const double e = gamma(16 * rows * cols + 30 * 8 * cols * cols);",
     "jacobi_singular_value_bound: half the sweep roundings (~2× too small)",
     "[tolerance],[certify]", "*margin*"),
    ("M2", "tests/support/test_tolerances.cpp", "return x_fro * qr_least_squares_relative_bound(",
     "return 0.5 * x_fro * qr_least_squares_relative_bound(",
     "least_squares_fit_bound 2× too small", "[tolerance],[stage3]", "*margin*"),
    ("M3", "tests/support/test_tolerances.cpp", "return 2.0 * gamma(terms - 1) * abs_z_sum",
     "return gamma(terms - 1) * abs_z_sum", "head_reorder_bound 2× too small", "[tolerance]", "*permut*"),
    ("M4", "src/numeric/tolerance.cpp", "const double exponent_error = (2.0 * logit_error +",
     "const double exponent_error = (logit_error +", "double_softmax_relative_error: logit error counted once",
     "[tolerance],[certify]", None),
    ("M5", "tests/support/test_tolerances.cpp", "double rescaled_norm_relative(long long entries) { return gamma(2 * entries + 4); }",
     "double rescaled_norm_relative(long long entries) { return gamma(entries + 4); }",
     "rescaled_norm_relative ~2× too small", "[tolerance],[io],[generate]", None),
    ("M6", "src/stages/stage2/certify.cpp", "if (every ? !(v_least >= o.v_min) : !(v[row] >= o.v_min)) return;",
     "if (every ? !(v_least > o.v_min) : !(v[row] > o.v_min)) return;", "v_min test strict (a row at v_min refused)",
     "[certify]", "*certification*"),
    ("M7", "src/stages/stage2/certify.cpp", "if (!(w.relative_residual <= o.tau))",
     "if (!(w.relative_residual < o.tau))", "residual test strict (a row at τ refused)",
     "[certify]", "*certification*"),
    ("M8", "src/stages/stage2/certify.cpp", "<= std::sqrt(double(k)) * w.delta))",
     "<= w.delta))", "sum test without √k", "[certify]", "*certification*"),
    ("M9", "src/stages/stage2/certify.cpp", "  return std::sqrt(fused_dot(e, e, d));",
     "  return fused_dot(e, e, d);",
     "δ with ‖v̂X‖² for ‖v̂X‖", "[certify]", "*certification*"),
    ("M10", "src/stages/stage3/margin.cpp", "if (!(margin >= threshold)) continue;",
     "if (!(margin > threshold)) continue;",
     "stage 3 refuses the event at the threshold", "[stage3]", "*refine_wsum*"),
    ("M11", "src/stages/stage5/span.cpp", "return gap >= min_gap ? best : 0;", "return gap > min_gap ? best : 0;",
     "gap test strict (a gap of exactly min_gap refused)", "[stage5]", "*stage 5*"),
    ("M12", "src/stages/stage5/widths.cpp", "const double wide = o.wide_width > 0 ? o.wide_width : body.radius() / 10;",
     "const double wide = o.wide_width > 0 ? o.wide_width : body.radius() / 5;",
     "wide threshold R/5 for R/10", "[stage5]", "*stage 5*"),
    ("M13", "src/stages/stage6/net.cpp", "l.resolution = axes > 0 ? 2 * setup.t_max / (g - 1) : 0;",
     "l.resolution = axes > 0 ? 2 * setup.t_max / g : 0;", "net spacing 2T/G for 2T/(G − 1)", "[stage6]", None),
    ("M14", "src/stages/stage6/net.cpp", "rep.final_resolution = axes > 0 ? 2 * h : 0;",
     "rep.final_resolution = axes > 0 ? h : 0;", "final resolution reported as h for 2h", "[stage6]", None),
    ("M15", "src/model/conditions.cpp", "c.pass = (c.comparison == \"<=\") ? value <= threshold : value >= threshold;",
     "c.pass = (c.comparison == \"<=\") ? value < threshold : value >= threshold;",
     "a '≤' condition fails at its threshold", "[conditions]", None),
    ("M16", "src/model/conditions.cpp", "return std::max(std::min(2.0, d / 3.0), d / 8.0);",
     "return std::max(std::min(2.0, d / 3.0), d / 4.0);", "stable-rank default d/4 for d/8", "[conditions]", None),
    ("M17", "src/stages/stage1/wsum.cpp", "const MatD s = xs.transpose() * ys / k;",
     "const MatD s = xs.transpose() * ys / (k + 1);", "stage-1 statistic divided by k + 1", "[stage1]", "*stage 1*"),
    ("M18", "src/stages/polish/reference.cpp", "return n > 0 ? Mpfr(grad.norm() / y_sum).convert_to<double>() : 0.0;",
     "return n > 0 ? Mpfr(grad.norm() / (2 * y_sum)).convert_to<double>() : 0.0;",
     "reference gradient norm halved", "[polish],[verify]", "*objective*"),
    ("M19", "src/geometry/exact_programs.cpp", "const Rational excess = abs(r) - Rational(s.eta);",
     "const Rational excess = abs(r) - 2 * Rational(s.eta);", "exact slab violation with 2η",
     "[geometry]", "*convex*"),
    ("M20", "src/stages/stage5/span.cpp", "  return std::acos(cos_min);", "  return std::acos(cos_min) / 2;",
     "largest_principal_angle halved", "[stage5]", "*stage 5*"),
    ("M21", "src/hardness/sq_family.cpp", "e += std::expm1(2.0 * m * d_theta[i]) * w_abs[i] + d_w[i];",
     "e += std::expm1(m * d_theta[i]) * w_abs[i] + d_w[i];", "SQ parameter error bound with e^{m dθ} for e^{2m dθ}",
     "[hardness]", "*SQ*"),
    ("M22", "src/stages/stage3/margin.cpp", "if (rep.event_rank == d) {", "if (rep.event_rank >= d - 1) {",
     "stage 3 fits with events one short of rank d", "[stage3]", "*refine_wsum*"),
    # The fault classes that once slipped past every unit and property test (issue
    # "One verdict per stage", item 5), each with the semantic check that now kills it.
    ("F1", "src/model/forward_fast.cpp", "        finite &= std::isfinite(row[b]);\n", "",
     "the fast path no longer refuses an infinite logit (outputs still checked)", "[forward]", None),
    ("F2", "src/stages/stage1/reference.cpp", "out.bound = (propagated + g * (magnitude + propagated)) / double(n) +",
     "out.bound = (propagated + g * (magnitude + propagated)) +", "stage 1's same-sample bound N times too loose",
     "[stage1]", None),
    ("F3", "src/stages/polish/reference.cpp", "out.bound = (std::max(above, below) + u * out.objective +",
     "out.bound = 10 * (std::max(above, below) + u * out.objective +",
     "polishing's objective bound 10 times too loose", "[polish]", None),
    ("F4", "src/geometry/exact_programs.cpp", "out.inside_ball = out.norm_squared <= r * r;",
     "out.inside_ball = out.norm_squared <= r;", "the exact QP's ball test against R for R²", "[geometry]", None),
    ("F5", "src/geometry/convex_body.cpp", "const double s = up(std::abs(res.value(r)) + res.error(r));",
     "const double s = up(std::abs(res.value(r)) - res.error(r));",
     "the certificate's violation with the rounding counted the wrong way", "[geometry]", None),
    ("F6", "src/model/forward_error.cpp", "const MatD e_l = gd * (p_abs * ax.transpose()) + e_p * ax.transpose();",
     "const MatD e_l = gd * (p_abs * ax.transpose());", "forward_error_bound without the logit part's own error",
     "[forward]", None),
    ("F7", "src/stages/stage3/margin.cpp", "    else if (j != argmax) return -INFINITY;\n", "",
     "stage 3 ignores that the proxies point at different tokens", "[stage3]", "*stage 3*"),
    ("F8", "src/stages/stage6/net.cpp", "a * n_ - a * (a - 1) / 2 + (b - a)", "a * n_ - a * (a + 1) / 2 + (b - a)",
     "an off-by-one in stage 6's pair Gram matrix (m ≥ 3)", "[stage6]", "*net*"),
    ("F9", "src/learn/evaluate.cpp", "const SampleOracle test(truth, seed, Stream::test_inputs);",
     "const SampleOracle test(truth, seed, Stream::inputs);", "the test error measured on the training stream",
     "[evaluate]", None),
    ("F10", "src/numeric/tolerance.cpp", "return (jacobian_term + (jacobian_relative_max * majorant_frobenius + jacobian_frobenius) * e +",
     "return ((jacobian_relative_max * majorant_frobenius + jacobian_frobenius) * e +",
     "polishing's gradient bound without the Jacobian's rounding", "[tolerance],[polish]", "*polish*"),
    ("F11", "src/model/forward_error.cpp", "const double coefficient = e + gk * (1.0 + e) + gmd * (1.0 + e) * (1.0 + gk);",
     "const double coefficient = e + gk * (1.0 + e);",
     "the design route's bound without the products with W", "[forward]", "*objective*"),
    # The five faults of issue "The checker checked" that passed every test at 21af68a,
    # each now killed by a test of that issue.
    ("N1", "src/numeric/comparison.cpp", "if (!(difference <= item_bound) || !std::isfinite(difference)) agree = false;",
     "if (difference > item_bound) agree = false;", "record: a NaN difference counts as agreement",
     "[comparison]", None),
    ("N2", "src/numeric/tolerance.cpp", "return (eps / (gap - eps) + orthogonality) * bound_evaluation_factor(8);",
     "return (eps / gap + orthogonality) * bound_evaluation_factor(8);",
     "singular_subspace_sin_bound with ε/gap for ε/(gap − ε)", "[tolerance]", None),
    ("N3", "src/stages/polish/check.cpp", "case BandSide::above: part.record_decision(false); break;",
     "case BandSide::above: part.record_undecided(); break;",
     "polishing's accepted step: a rise of the reference objective undecided", "[polish]", None),
    ("N4", "src/stages/stage3/check.cpp", "if (worst > 2) {", "if (worst > 20) {",
     "stage 3's empty body: 'beyond the contract' at 20 tolerances for 2", "[stage3]", None),
    ("N5", "src/learn/reference_checks.cpp",
     "bool large_references_fit(int d, int64_t max_unknowns) { return int64_t{d} * d <= max_unknowns; }",
     "bool large_references_fit(int d, int64_t max_unknowns) { return int64_t{d} <= max_unknowns; }",
     "the large references' gate compares d, not d², with --reference-max-unknowns", "[branches]", None),
]




def run(cmd, timeout=1800, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


# ---- generated mutants

def schema_module():
    sys.path.insert(0, str(ROOT / "scripts"))
    import mutation_schema
    return mutation_schema


def compile_commands(build):
    path = Path(build) / "compile_commands.json"
    if not path.exists():
        sys.exit(f"{path} missing: configure first (cmake --preset release)")
    return json.loads(path.read_text())


def generate(files, build):
    """{file: schema text} and the mutants (ids global, in SCOPE order)."""
    ms = schema_module()
    cc = compile_commands(build)
    schemata, mutants = {}, []
    for f in files:
        text, ms_mutants = ms.generate(str(ROOT / f), cc, str(ROOT), len(mutants))
        schemata[f] = text
        mutants += ms_mutants
    return schemata, mutants


def mutant_record(m):
    return {"id": m.id, "file": m.file, "line": m.line, "function": m.function, "operator": m.operator,
            "original": m.original, "replacement": m.replacement, "key": m.key}


def cmd_list(a):
    _, mutants = generate(a.files, a.build)
    by = {}
    for m in mutants:
        by.setdefault(m.file, {}).setdefault(m.operator, 0)
        by[m.file][m.operator] += 1
    for f in a.files:
        ops = by.get(f, {})
        print(f"{f}: {sum(ops.values())}  " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    print(f"{len(mutants)} mutants in {len(a.files)} files; {sum(m.key in EQUIVALENT for m in mutants)} named equivalent")
    if a.verbose:
        for m in mutants:
            print(f"{m.id}\t{m.file}:{m.line}\t{m.function}\t{m.operator}\t{m.original}  =>  {m.replacement}\t{m.key}")
    return 0


def copy_tree(dest):
    """The working tree's files (tracked and new, not ignored) copied to dest."""
    listed = run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT).stdout.split("\0")
    if dest.exists():
        shutil.rmtree(dest)
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    # the commit, so that the copy's provenance (and ccache's view of it) matches the tree's
    shutil.copytree(ROOT / ".git", dest / ".git", symlinks=True) if (ROOT / ".git").is_dir() else None


def refresh_tree(tree):
    """The working tree's files other than the schemata copied to the schema tree where they
    differ (tests written since it was built); whether any was. A change to a file of SCOPE
    needs --fresh (its schema generated again)."""
    listed = run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT).stdout.split("\0")
    changed = False
    for rel in filter(None, listed):
        src, dest = ROOT / rel, tree / rel
        if rel in SCOPE or not src.is_file():
            continue
        if not dest.exists() or dest.read_bytes() != src.read_bytes():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            print(f"refreshed {rel}", flush=True)
            changed = True
    return changed


def build_tree(tree, targets):
    if run(["cmake", "--preset", "release"], cwd=tree, timeout=600).returncode != 0:
        sys.exit("configuring the schema tree failed")
    r = run(["flock", "/tmp/mhalearn-build.lock", "nice", "-n", "5", "cmake", "--build", "--preset", "release",
             "-j", "2", "--target", *targets], cwd=tree, timeout=4 * 3600)
    if r.returncode != 0:
        sys.exit("building the schema tree failed:\n" + r.stdout[-4000:] + r.stderr[-2000:])


FAILED_TEST = re.compile(r"^-{79}\n(.+?)\n-{79}", re.M)


def catch_spec(name):
    """A Catch2 test spec that selects exactly the test case `name` (its special characters escaped)."""
    return re.sub(r"([\\,\[\]\"*~])", r"\\\1", name)


def run_case(binary, name, mutant, timeout, cwd, trace=None):
    """(seconds, None when the test case passes, else what failed) of one test case."""
    env = dict(os.environ, MHALEARN_MUTANT=str(mutant))
    env.pop("MHALEARN_MUTANT_TRACE", None)
    if trace:
        env["MHALEARN_MUTANT_TRACE"] = str(trace)
    start = time.time()
    try:
        r = subprocess.run(["nice", "-n", "10", str(binary), catch_spec(name)], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return time.time() - start, f"{name}: timeout after {timeout:.0f} s"
    seconds = time.time() - start
    if r.returncode == 0 and "No test cases matched" not in r.stdout:
        return seconds, None
    m = FAILED_TEST.search(r.stdout)
    return seconds, (m.group(1).strip() if m else f"{name}: exit {r.returncode}")


def test_names(binary, cwd):
    r = run([str(binary), "--list-test-names-only"], cwd=cwd)
    return [line for line in r.stdout.splitlines() if line.strip()]


def coverage(tree, work, program):
    """{test case: {"seconds", "reached": [mutant ids]}} of one test program without a mutant
    (cached in work/coverage-<program>.json); stops when a test fails without a mutant."""
    path = work / f"coverage-{program}.json"
    binary = tree / "build" / "release" / program
    stamp = str(binary.stat().st_mtime_ns)
    saved = json.loads(path.read_text()) if path.exists() else {}
    cov = saved.get("cases", {}) if saved.get("binary") == stamp else {}
    trace = work / "trace.txt"
    for name in test_names(binary, tree):
        if name in cov:
            continue
        trace.unlink(missing_ok=True)
        seconds, failed = run_case(binary, name, -1, 7200, tree, trace)
        if failed:
            sys.exit(f"{program}: a test fails without a mutant ({failed}): fix the tests first")
        reached = sorted({int(x) for x in trace.read_text().split()}) if trace.exists() else []
        cov[name] = {"seconds": round(seconds, 3), "reached": reached}
        print(f"coverage {program}: {seconds:7.1f} s  {len(reached):5d} sites  {name}", flush=True)
        path.write_text(json.dumps({"binary": stamp, "cases": cov}, indent=0))
    return cov


def covering(cov, mutant, skip=()):
    """The test cases of a coverage map that reach `mutant`, fastest first."""
    return sorted((c["seconds"], name) for name, c in cov.items() if mutant in c["reached"] and name not in skip)


def first_kill(tree, program, cases, mutant):
    for seconds, name in cases:
        timeout = max(TIMEOUT_FLOOR, TIMEOUT_FACTOR * seconds)
        _, failed = run_case(tree / "build" / "release" / program, name, mutant, timeout, tree)
        if failed:
            return f"{program}: {failed}"
    return None


def golden_kills(tree, mutant):
    """Whether the golden outputs (CTest "golden: outputs match the committed bytes") change under the mutant."""
    env = dict(os.environ, MHALEARN_MUTANT=str(mutant))
    try:
        r = subprocess.run(["nice", "-n", "10", sys.executable, str(tree / "tests/golden/golden.py"), "--tool",
                            str(tree / "build/release/mhalearn")], capture_output=True, text=True, timeout=1800,
                           env=env, cwd=tree)
    except subprocess.TimeoutExpired:
        return True
    return r.returncode != 0


def judge(tree, work, m, full, golden):
    """The status of one mutant: killed by the targeted tests, by the full suites, by the golden
    bytes only, not reached by any test run, or survived."""
    cov_t = coverage(tree, work, TARGETED_PROGRAM)
    targeted = covering(cov_t, m["id"])
    by = first_kill(tree, TARGETED_PROGRAM, targeted, m["id"])
    if by:
        return {"status": "killed (targeted)", "by": by}
    reached = bool(targeted)
    if full:
        for prog in FULL_PROGRAMS:
            cases = covering(coverage(tree, work, prog), m["id"], skip=cov_t)
            reached |= bool(cases)
            by = first_kill(tree, prog, cases, m["id"])
            if by:
                return {"status": "killed (full suite)", "by": by}
    result = {"status": "survived" if reached else "not reached", "by": None, "full": full}
    if golden and golden_kills(tree, m["id"]):
        result["status"] = "killed by golden only"
    return result


def cmd_run(a):
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    tree = work / "tree"
    results_path = work / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() and not a.fresh else {}
    targets = [TARGETED_PROGRAM, *FULL_PROGRAMS, "mhalearn"] if a.full or a.golden else [TARGETED_PROGRAM]
    if a.fresh or not (tree / "build" / "release" / TARGETED_PROGRAM).exists():
        schemata, mutants = generate(SCOPE, a.build)
        copy_tree(tree)
        for f, text in schemata.items():
            (tree / f).write_text(text)
        (work / "mutants.json").write_text(json.dumps([mutant_record(m) for m in mutants], indent=1))
        (work / "sources.json").write_text(json.dumps({f: (ROOT / f).read_text() for f in SCOPE}))
        for stale in work.glob("coverage-*.json"):
            stale.unlink()
        results = {}
        t0 = time.time()
        build_tree(tree, targets)
        (work / "build_seconds").write_text(f"{time.time() - t0:.0f}\n")
    elif refresh_tree(tree) or not all((tree / "build" / "release" / t).exists() for t in targets):
        build_tree(tree, targets)  # tests added since: the changed binaries' coverage is taken again
    sources = json.loads((work / "sources.json").read_text())
    moved = [f for f in SCOPE if sources.get(f) != (ROOT / f).read_text()]
    if moved:
        sys.exit(f"{', '.join(moved)} changed since the schemata were made: run with --fresh")
    mutants = json.loads((work / "mutants.json").read_text())
    start, cpu0, judged = time.time(), os.times(), 0
    for m in mutants:
        sid = str(m["id"])
        if m["file"] not in a.files or (a.ids and m["id"] not in a.ids):
            continue
        if m["key"] in EQUIVALENT:
            results[sid] = {"status": "equivalent", "by": EQUIVALENT[m["key"]]}
            continue
        old = results.get(sid)
        if a.survivors:
            if not old or old["status"] not in ("survived", "not reached"):
                continue
        elif old and old["status"].startswith("killed (") and not a.again:
            continue
        elif old and old.get("full", False) >= a.full and not a.again and not (a.golden and old["status"] != "killed by golden only"):
            continue
        if a.limit and judged >= a.limit:
            break
        judged += 1
        results[sid] = judge(tree, work, m, a.full, a.golden)
        print(f"{sid}\t{results[sid]['status']}\t{m['file']}:{m['line']}\t{m['operator']}\t{m['original'][:60]}",
              flush=True)
        results_path.write_text(json.dumps(results, indent=1))
    cpu = os.times()
    (work / "run_seconds").write_text(
        f"wall {time.time() - start:.0f} s, children's CPU {cpu.children_user - cpu0.children_user + cpu.children_system - cpu0.children_system:.0f} s,"
        f" {judged} mutants judged\n")
    results_path.write_text(json.dumps(results, indent=1))
    return cmd_report(a)


STATUSES = ["equivalent", "killed (targeted)", "killed (full suite)", "killed by golden only", "survived",
            "not reached", "not run"]


def merged_results(works):
    """The mutants of the last work folder, each with its latest result by key across the folders
    (a later folder's result replaces an earlier one's), taken only from a folder whose schema was
    made from the same source of that file; a mutant named in EQUIVALENT since it was judged counts
    as equivalent."""
    newest = works[-1]
    mutants = json.loads((newest / "mutants.json").read_text())
    sources = json.loads((newest / "sources.json").read_text())
    by_key = {}
    for work in works:
        if not (work / "results.json").exists():
            continue
        theirs = json.loads((work / "sources.json").read_text())
        results = json.loads((work / "results.json").read_text())
        for m in json.loads((work / "mutants.json").read_text()):
            r = results.get(str(m["id"]))
            if r is not None and theirs.get(m["file"]) == sources.get(m["file"]):
                by_key[m["key"]] = r
    merged = {}
    for m in mutants:
        r = by_key.get(m["key"], {"status": "not run"})
        if m["key"] in EQUIVALENT and r["status"] != "equivalent":
            r = {"status": "equivalent", "by": EQUIVALENT[m["key"]]}
        merged[str(m["id"])] = r
    return mutants, merged


def cmd_report(a):
    mutants, results = merged_results([Path(w) for w in a.work.split(",")])
    rows, totals, ops = {}, dict.fromkeys(["mutants"] + STATUSES, 0), {}
    survivors = []
    for m in mutants:
        r = results.get(str(m["id"]), {"status": "not run"})
        row = rows.setdefault(m["file"], dict.fromkeys(totals, 0))
        op = ops.setdefault(m["operator"], dict.fromkeys(totals, 0))
        for t in (row, totals, op):
            t["mutants"] += 1
            t[r["status"]] += 1
        if r["status"] in ("survived", "not reached", "killed by golden only"):
            survivors.append((m, r))
    def table(title, rows):
        print(f"| {title} | mutants | equivalent | killed by the verdict tests | killed by the full suites | "
              "killed by golden bytes only | survived (reached) | not reached by any test | not run |")
        print("|---|---|---|---|---|---|---|---|---|")
        for f, r in rows.items():
            print(f"| {f} | " + " | ".join(str(r[k]) for k in ["mutants"] + STATUSES[:]) + " |")
        print("| **all** | " + " | ".join(str(totals[k]) for k in ["mutants"] + STATUSES) + " |")
    table("file", rows)
    print()
    table("operator", dict(sorted(ops.items())))
    decided = totals["mutants"] - totals["equivalent"] - totals["not run"]
    killed = totals["killed (targeted)"] + totals["killed (full suite)"]
    print(f"\nScore: {killed} of {decided} non-equivalent mutants run killed by a semantic test"
          f" ({100.0 * killed / decided if decided else 0:.1f} %); {totals['killed by golden only']} more change"
          f" only the golden bytes (not counted); {totals['not run']} not run.")
    if survivors:
        print("\nSurvivors:\n")
        print("| id | file:line | function | operator | original → mutant | status |")
        print("|---|---|---|---|---|---|")
        for m, r in survivors:
            print(f"| {m['id']} | {m['file']}:{m['line']} | {m['function']} | {m['operator']} | "
                  f"`{m['original'][:70]}` → `{m['replacement'][:70]}` | {r['status']} |")
    return 0


SELF_TEST_SOURCE = """#include <cstdio>
#include <cstdlib>
double bound(double eps, double gap) {
  if (!(gap > eps)) return 1e300;
  return eps / (gap - eps) * 2.0;
}
int main(int argc, char** argv) {
  int count = 0;
  for (int i = 0; i < 4; ++i) count += i;
  const bool flag = true;
  std::printf("%.17g %d %d\\n", bound(std::atof(argv[1]), std::atof(argv[2])), count, flag && argc > 1 ? 1 : 0);
}
"""


def cmd_self_test(a):
    """The generator on a small program: every operator makes its mutants, the schema
    compiles, no mutant (-1) is the original program and each mutant id changes it as
    its operator says."""
    import tempfile
    ms = schema_module()
    ok = True
    with tempfile.TemporaryDirectory(prefix="mhalearn-mutation-self-test-") as d:
        src = Path(d) / "program.cpp"
        src.write_text(SELF_TEST_SOURCE)
        cc = [{"directory": d, "file": str(src), "command": f"g++ -std=c++20 -O1 -c {src} -o {d}/program.o"}]
        text, mutants = ms.generate(str(src), cc, d, 0)
        ops = {m.operator for m in mutants}
        want = {"relational-flip", "relational-negate", "negation-dropped", "logical-swap", "constant-x10",
                "constant-x0.1", "term-dropped", "branch-swapped", "bool-flipped", "loop-bound"}
        for op in sorted(want):
            good = op in ops
            ok &= good
            print("ok  " if good else "FAIL", f"operator {op}: {sum(m.operator == op for m in mutants)} mutants")
        nan_rewrite = any(m.operator == "relational-negate" and m.original == "!(gap > eps)" and
                          m.replacement == "(gap) <= (eps)" for m in mutants)
        ok &= nan_rewrite
        print("ok  " if nan_rewrite else "FAIL", "`!(gap > eps)` → `gap <= eps` (the NaN-sensitive rewrite)")
        schema = Path(d) / "schema.cpp"
        schema.write_text(text)
        r = run(["g++", "-std=c++20", "-O1", str(schema), "-o", str(Path(d) / "schema")])
        good = r.returncode == 0
        ok &= good
        print("ok  " if good else "FAIL", "the schema compiles", r.stderr[-800:] if not good else "")
        if not good:
            return 1
        def out(mid, *args):
            env = dict(os.environ, MHALEARN_MUTANT=str(mid))
            return run([str(Path(d) / "schema"), *args], env=env).stdout.strip()
        original = out(-1, "1", "3")
        good = original == "1 6 1"
        ok &= good
        print("ok  " if good else "FAIL", f"no mutant: the original program ({original!r})")
        changed = sum(out(m.id, "1", "3") != original for m in mutants)
        print(f"     {changed} of {len(mutants)} mutants change the output on this one input")
        dropped = [m for m in mutants if m.operator == "term-dropped" and m.original == "gap - eps"]
        good = bool(dropped) and out(dropped[0].id, "1", "3") == "0.66666666666666663 6 1"
        ok &= good
        print("ok  " if good else "FAIL", "`gap - eps` → `gap` selected at run time: ε/gap·2")
        trace = Path(d) / "trace.txt"
        env = dict(os.environ, MHALEARN_MUTANT="-1", MHALEARN_MUTANT_TRACE=str(trace))
        run([str(Path(d) / "schema"), "3", "1"], env=env)  # gap < ε: the division is never reached
        reached = {int(x) for x in trace.read_text().split()} if trace.exists() else set()
        guard = [m.id for m in mutants if m.original == "!(gap > eps)"]
        good = bool(guard) and set(guard) <= reached and dropped[0].id not in reached
        ok &= good
        print("ok  " if good else "FAIL", f"the coverage trace: the guard's sites reached, the division's not"
              f" ({len(reached)} of {len(mutants)} sites reached)")
        loop = [m for m in mutants if m.operator == "loop-bound"]
        good = len(loop) == 2 and sorted(out(m.id, "1", "3").split()[1] for m in loop) == ["10", "3"]
        ok &= good
        print("ok  " if good else "FAIL", "the loop bound ± 1: sums 0..4 and 0..2")
    return 0 if ok else 1


# ---- named faults (the list the project started with)

def build_named(build_dir):
    r = run(["flock", "/tmp/mhalearn-build.lock", "nice", "-n", "5", "cmake", "--build", build_dir, "-j", "2",
             "--target", "unit_tests", "property_tests"], cwd=ROOT)
    if r.returncode != 0:
        sys.exit("build failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])


def caught(build_dir, unit_spec, prop_spec, hardening):
    spec = unit_spec if hardening else ",".join(f"{t}~[hardening]" for t in unit_spec.split(","))
    try:
        if run([f"{build_dir}/unit_tests", spec], timeout=900, cwd=ROOT).returncode != 0:
            return True
        if prop_spec and run([f"{build_dir}/property_tests", prop_spec], timeout=900, cwd=ROOT).returncode != 0:
            return True
    except subprocess.TimeoutExpired:
        return True
    return False


def stale_snippets():
    """The mutations whose snippet does not occur exactly once in its file (the code moved on)."""
    return [f"{mid}: the snippet occurs {(ROOT / path).read_text().count(old)} times in {path}"
            for mid, path, old, *_ in MUTATIONS if (ROOT / path).read_text().count(old) != 1]


def cmd_named(a):
    only = set(a.only.split(",")) if a.only else None
    print("| id | fault | file:line | caught before | caught after |")
    print("|---|---|---|---|---|")
    for mid, path, old, new, what, unit_spec, prop_spec in MUTATIONS:
        if only and mid not in only:
            continue
        f = ROOT / path
        original = f.read_bytes()
        text = original.decode()
        assert text.count(old) == 1, f"{mid}: the snippet occurs {text.count(old)} times in {path}"
        line = text[: text.index(old)].count("\n") + 1
        start = time.time()
        try:
            f.write_text(text.replace(old, new))
            build_named(a.build)
            before = caught(a.build, unit_spec, prop_spec, hardening=False)
            after = caught(a.build, unit_spec, prop_spec, hardening=True)
        finally:
            f.write_bytes(original)
        print(f"| {mid} | {what} | {path}:{line} | {'yes' if before else 'no'} | {'yes' if after else 'no'} |"
              f"  <!-- {time.time() - start:.0f} s -->", flush=True)
    build_named(a.build)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true")
    mode.add_argument("--run", action="store_true")
    mode.add_argument("--report", action="store_true")
    mode.add_argument("--self-test", action="store_true")
    mode.add_argument("--named", action="store_true")
    mode.add_argument("--check-snippets", action="store_true",
                      help="only check that every named mutation's snippet occurs once (no build; CTest runs this)")
    p.add_argument("--build", default="build/release", help="the configured tree whose compile commands are used")
    p.add_argument("--work", default="/tmp/mhalearn-mutants", help="the schema tree and the results (never in the repository)")
    p.add_argument("--files", default=",".join(SCOPE), help="comma-separated files of SCOPE to mutate")
    p.add_argument("--full", action="store_true", help="survivors of the verdict tests through the full suites")
    p.add_argument("--golden", action="store_true", help="survivors through the golden outputs (not counted as killed)")
    p.add_argument("--again", action="store_true", help="judge every selected mutant again (after new tests)")
    p.add_argument("--survivors", action="store_true",
                   help="judge again only the selected mutants that survived or were not reached (after new tests)")
    p.add_argument("--limit", type=int, default=0, help="judge at most this many mutants (0: all; to time a file)")
    p.add_argument("--ids", default="", help="only these mutant ids: comma-separated ids and ranges (12,40-45)")
    p.add_argument("--fresh", action="store_true", help="regenerate and rebuild the schema tree, forget results")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--only", default="")
    a = p.parse_args()
    a.files = [f for f in a.files.split(",") if f]
    a.ids = {i for part in a.ids.split(",") if part
             for i in (range(int(part.split("-")[0]), int(part.split("-")[1]) + 1) if "-" in part[1:] else [int(part)])}
    if a.check_snippets:
        stale = stale_snippets()
        for line in stale:
            print("STALE", line)
        print(f"mutation snippets: {len(MUTATIONS)} mutations, {len(stale)} stale")
        return 1 if stale else 0
    if a.named:
        return cmd_named(a)
    if a.run:
        return cmd_run(a)
    if a.report:
        return cmd_report(a)
    if a.self_test:
        return cmd_self_test(a)
    return cmd_list(a)


if __name__ == "__main__":
    sys.exit(main())

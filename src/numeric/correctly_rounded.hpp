// hypot and cbrt correctly rounded: the double nearest the exact value (ties to
// even), the same number on every ISA and with every libm.
//
// Why not std::hypot and std::cbrt: glibc 2.36 builds them differently for
// x86-64 (no FMA) and aarch64 (FMA), and neither rounds correctly, so the two
// architectures disagree on 13 % (hypot, 1 ulp) and 20 % (cbrt, up to 4 ulp)
// of arguments (docs/reproducibility.md, "Other platforms";
// scripts/platform_check.py libm). A correctly rounded result is defined by
// the arguments alone. MPFR computes it (at 53 bits, a double's precision);
// the call sites are not hot (the convex-body geometry's Givens rotations and
// `mhalearn hard`'s SQ bound; docs/bench/arithmetic.md has the cost).
#pragma once

namespace mha {

// √(a² + b²) rounded to nearest; +∞ when a or b is infinite (even if the other
// is NaN), NaN when either is NaN otherwise; no spurious overflow or underflow.
double correctly_rounded_hypot(double a, double b);

// ∛x rounded to nearest (negative for negative x; ±0, ±∞ and NaN as given).
double correctly_rounded_cbrt(double x);

}  // namespace mha

// CLP settings every LP of the project shares.
#pragma once

#include <ClpFactorization.hpp>
#include <ClpSimplex.hpp>

namespace mha {

// CoinUtils' factorisation hands a basis's dense remainder to LAPACK's dgetrf_/dgetrs_,
// from whichever liblapack.so.3 Debian's alternatives select (the reference LAPACK, or
// OpenBLAS with a kernel per CPU), and their last bits reach the LP's answer
// (docs/reproducibility.md, the LAPACK row of its table). Dense threshold 0 keeps the
// whole factorisation in CoinUtils' own sparse code — a mode CLP itself falls back to —
// so the answer no longer depends on the LAPACK or the CPU. Called before every solve
// (a solve may build a new factorisation from the model's settings).
inline void factorise_without_lapack(ClpSimplex& model) { model.factorization()->setDenseThreshold(0); }

}  // namespace mha

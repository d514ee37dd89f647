#include "model/conditions.hpp"

#include <Eigen/SVD>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>

namespace mha {

// A random Gaussian d×d matrix has stable rank ≈ d/4 for large d (and ≈ 1.7
// at d = 4): ask for d/8 at large d, 2 from d = 6, and d/3 below that so that
// the tiny instances used with exhaustive enumeration remain drawable.
double default_stable_rank_threshold(int d) { return std::max(std::min(2.0, d / 3.0), d / 8.0); }
double default_diagonal_threshold(int d) { return std::max(4.0, std::log2(static_cast<double>(std::max(d, 1)))); }
double default_atom_mass_threshold(int d, std::int64_t mc_samples) {
  const double dd = std::max(d, 1);
  // Every Θ has atoms of mass 2·2^{-2d} from (x, x') → (−x, −x'); allow twice
  // that so that d ≤ 3 is not failed by the symmetry alone.
  const double t = std::max(1.0 / (4.0 * dd * dd), 4.0 * std::ldexp(1.0, -2 * static_cast<int>(std::min(dd, 512.0))));
  return mc_samples > 0 ? std::max(t, 8.0 / static_cast<double>(mc_samples)) : t;
}

bool atom_mass_is_exact(int d, const ConditionThresholds& t) {
  return 2 * d <= std::min(t.atom_exact_max_bits, 24);
}
double default_max_heads(int d) { return std::max(1.0, std::log2(static_cast<double>(std::max(d, 1)))); }

bool ConditionReport::all_pass() const {
  return std::all_of(checks.begin(), checks.end(), [](const ConditionCheck& c) { return c.pass; });
}

const ConditionCheck* ConditionReport::find(const std::string& name) const {
  for (const auto& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string head_label(int i) { return "head " + std::to_string(i); }
std::string pair_label(int i, int j) { return "heads " + std::to_string(i) + "," + std::to_string(j); }

double op_norm(const MatD& a) {
  if (a.size() == 0) return 0.0;
  // Singular values only, of a d×d matrix. JacobiSVD rather than BDCSVD: as
  // accurate, fast enough at these sizes, and BDCSVD's instantiation made this
  // file one of the slowest of the sanitizer build (133 s against 83 s).
  Eigen::JacobiSVD<MatD> svd(a);
  return svd.singularValues().size() ? svd.singularValues()(0) : 0.0;
}

ConditionCheck make(std::string name, std::string description, double value, const char* cmp,
                    double threshold, std::string worst) {
  ConditionCheck c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.value = value;
  c.comparison = cmp;
  c.threshold = threshold;
  c.pass = (c.comparison == "<=") ? value <= threshold : value >= threshold;
  c.worst = std::move(worst);
  return c;
}

// Per-head summary of a family of matrices (all Θ_i or all W_i).
struct Family {
  std::vector<const MatD*> mats;
  std::vector<double> fro, op;
};

Family summarize(const Layer& layer, bool theta) {
  Family f;
  for (const auto& h : layer.heads) {
    const MatD& a = theta ? h.theta : h.w;
    f.mats.push_back(&a);
    f.fro.push_back(a.norm());
    f.op.push_back(op_norm(a));
  }
  return f;
}

// max_{i≠j} |⟨A_i,A_j⟩| / (‖A_i‖_F ‖A_j‖_F); a pair involving a zero matrix counts as 1.
ConditionCheck incoherence(const Family& f, const std::string& name, const std::string& sym,
                           double threshold) {
  const std::string desc = "max_{i≠j} |⟨" + sym + "_i," + sym + "_j⟩| / (‖" + sym + "_i‖_F ‖" + sym +
                           "_j‖_F), pairwise cosine of the heads";
  const int m = static_cast<int>(f.mats.size());
  if (m < 2) return make(name, desc, 0.0, "<=", threshold, "n/a");
  double worst = -1;
  int wi = 0, wj = 1;
  for (int i = 0; i < m; ++i)
    for (int j = i + 1; j < m; ++j) {
      double c;
      if (f.fro[i] == 0.0 || f.fro[j] == 0.0) {
        c = 1.0;
      } else {
        const double ip = (f.mats[i]->array() * f.mats[j]->array()).sum();
        c = std::min(1.0, std::abs(ip) / (f.fro[i] * f.fro[j]));
      }
      if (c > worst) worst = c, wi = i, wj = j;
    }
  return make(name, desc, worst, "<=", threshold, pair_label(wi, wj));
}

// min_i ‖A_i‖_F² / ‖A_i‖_op²; a zero matrix has stable rank 0.
ConditionCheck stable_rank(const Family& f, const std::string& name, const std::string& sym,
                           double threshold) {
  double worst = kInf;
  int wi = 0;
  for (size_t i = 0; i < f.mats.size(); ++i) {
    const double sr = f.op[i] > 0 ? (f.fro[i] * f.fro[i]) / (f.op[i] * f.op[i]) : 0.0;
    if (sr < worst) worst = sr, wi = static_cast<int>(i);
  }
  return make(name, "min_i ‖" + sym + "_i‖_F² / ‖" + sym + "_i‖_op², stable rank", worst, ">=", threshold,
              head_label(wi));
}

// max_i ‖A_i‖_F / min_i ‖A_i‖_F; +inf when some (not all) heads are zero, 1 when all are.
ConditionCheck norm_ratio(const Family& f, const std::string& name, const std::string& sym,
                          double threshold) {
  const std::string desc = "max_i ‖" + sym + "_i‖_F / min_i ‖" + sym + "_i‖_F, comparable norms";
  const int m = static_cast<int>(f.fro.size());
  if (m < 2) return make(name, desc, 1.0, "<=", threshold, "n/a");
  const int imax = static_cast<int>(std::max_element(f.fro.begin(), f.fro.end()) - f.fro.begin());
  const int imin = static_cast<int>(std::min_element(f.fro.begin(), f.fro.end()) - f.fro.begin());
  double r;
  if (f.fro[imax] == 0.0) r = 1.0;
  else if (f.fro[imin] == 0.0) r = kInf;
  else r = f.fro[imax] / f.fro[imin];
  return make(name, desc, r, "<=", threshold, pair_label(imax, imin));
}

std::string fmt_num(double v, int precision = 4) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  std::ostringstream os;
  os << std::setprecision(precision) << v;
  return os.str();
}

// Signs of a bit pattern: bit c set -> x_c = -1, clear -> +1.
void fill_signs(double* row, int d, const std::uint64_t* words) {
  for (int c = 0; c < d; ++c) row[c] = ((words[c / 64] >> (c % 64)) & 1u) ? -1.0 : 1.0;
}

// Largest number of sorted values inside a window of width `width` (sliding window).
// Returns the count and the window's centre.
std::pair<std::int64_t, double> heaviest_window(std::vector<double>& v, double width) {
  std::sort(v.begin(), v.end());
  std::int64_t best = 0;
  double centre = 0;
  size_t lo = 0;
  for (size_t hi = 0; hi < v.size(); ++hi) {
    while (v[hi] - v[lo] > width) ++lo;
    const auto count = static_cast<std::int64_t>(hi - lo + 1);
    if (count > best) best = count, centre = 0.5 * (v[hi] + v[lo]);
  }
  return {best, centre};
}

}  // namespace

// Non-arithmetic entries (MATH.md §2), made measurable.
//
// The paper needs the Boolean logit ℓ = x Θ x'ᵀ to have no large atoms: the
// entries of Θ must be "far from any lattice". We measure the heaviest δ-atom
//   max_v P[|ℓ − v| <= δ‖Θ‖_F],   δ = 1e-9 (relative to the logit scale ‖Θ‖_F).
// Rationale for the threshold 1/(4d²) (d = 16 allows ~1e-3):
//  * a generic real Θ has only the atoms forced by the symmetry
//    (x, x') -> (−x, −x'), which leaves ℓ unchanged: mass exactly 2·2^{-2d};
//  * Θ with all entries ±t makes ℓ/t an integer of the same parity as d², of
//    spread ~d, so its atoms have mass of order 1/d (≈ 0.05 at d = 16); a Θ
//    supported on a few coordinates (the SQ family of MATH.md §4) has atoms of
//    constant mass. 1/(4d²) separates both from the generic case with room.
// Estimation: with 2d <= atom_exact_max_bits (capped at 24) all 2^{2d} pairs are
// enumerated and the mass is exact. Otherwise N = atom_samples pairs are drawn
// from std::mt19937_64 seeded with the fixed atom_seed (reproducible report):
// for each pair, x then x' consume ceil(d/64) 64-bit words each, bit c giving
// the sign of coordinate c. The sorted logits are scanned with a sliding window
// of width 2δ‖Θ‖_F and mass = (largest window count)/N. Resolution: 1/N — a
// generic Θ reads 1/N–3/N (repeated samples, chance δ-coincidences), not its
// true 2^{1-2d}; hence the default threshold is floored at 8/N in this mode,
// otherwise every generic Θ would fail for d >= 128 (1/(4d²) <= 1/N).
AtomMass logit_atom_mass(const MatD& theta, const ConditionThresholds& t) {
  const int d = static_cast<int>(theta.rows());
  AtomMass out;
  if (d == 0) return {1.0, 0.0, true, 1};
  const double width = 2.0 * t.atom_delta * theta.norm();
  std::vector<double> logits;

  if (atom_mass_is_exact(d, t)) {
    const std::int64_t n = std::int64_t{1} << d;
    MatD xs(n, d);
    for (std::int64_t u = 0; u < n; ++u) {
      const auto word = static_cast<std::uint64_t>(u);
      fill_signs(xs.row(u).data(), d, &word);
    }
    const MatD p = xs * theta;               // row u: x_u Θ
    const MatD l = p * xs.transpose();       // (u, u'): x_u Θ x_{u'}ᵀ
    logits.assign(l.data(), l.data() + l.size());
    out.exact = true;
  } else {
    const std::int64_t n = std::max<std::int64_t>(t.atom_samples, 1);
    std::mt19937_64 gen(t.atom_seed);
    const int words = (d + 63) / 64;
    std::vector<std::uint64_t> buf(words);
    const std::int64_t block = 4096;
    logits.reserve(n);
    MatD x, xp;
    for (std::int64_t start = 0; start < n; start += block) {
      const std::int64_t b = std::min(block, n - start);
      x.resize(b, d);
      xp.resize(b, d);
      for (std::int64_t r = 0; r < b; ++r) {
        for (auto& w : buf) w = gen();
        fill_signs(x.row(r).data(), d, buf.data());
        for (auto& w : buf) w = gen();
        fill_signs(xp.row(r).data(), d, buf.data());
      }
      const MatD xt = x * theta;
      const Eigen::VectorXd l = (xt.array() * xp.array()).rowwise().sum();
      logits.insert(logits.end(), l.data(), l.data() + l.size());
    }
    out.exact = false;
  }
  out.pairs = static_cast<std::int64_t>(logits.size());
  const auto [count, centre] = heaviest_window(logits, width);
  out.mass = static_cast<double>(count) / static_cast<double>(out.pairs);
  out.location = centre;
  return out;
}

namespace {

// On Gaussian inputs the logit xΘx'ᵀ given x is N(0, ‖xΘ‖²) and xΘ ≠ 0 almost surely
// when Θ ≠ 0, so its law has no atom (proofs/gaussian_inputs.md, "The non-arithmetic
// condition"): the heaviest atom is exactly 0, or 1 for a zero head. Measuring the
// Boolean logit's atoms there would redraw instances for a condition they need not meet.
ConditionCheck gaussian_non_arithmetic(const Family& th, const ConditionThresholds& t, int d) {
  int wi = 0;
  double worst = 0;
  for (int i = 0; i < static_cast<int>(th.fro.size()); ++i)
    if (th.fro[i] == 0) {
      worst = 1;
      wi = i;
      break;
    }
  return make("theta_non_arithmetic",
              "max_i max_v P[xΘ_i x'ᵀ = v], x,x' ~ N(0, I_d): 0 for Θ_i ≠ 0, 1 for a zero head (exact)",
              worst, "<=", t.theta_atom_mass.value_or(default_atom_mass_threshold(d)), head_label(wi));
}

}  // namespace

ConditionReport check_conditions(const Instance& inst, const ConditionThresholds& t) {
  const Layer& layer = inst.layer;
  const int d = layer.d();
  const int m = layer.m();
  const int k = inst.k;
  ConditionReport rep;
  const Family th = summarize(layer, true);
  const Family w = summarize(layer, false);

  // --- Θ ---
  rep.checks.push_back(incoherence(th, "theta_incoherence", "Θ", t.theta_incoherence));
  rep.checks.push_back(stable_rank(th, "theta_stable_rank", "Θ",
                                   t.theta_stable_rank.value_or(default_stable_rank_threshold(d))));
  {
    double worst = -1;
    int wi = 0;
    for (int i = 0; i < m; ++i) {
      const double tr = th.mats[i]->trace();
      const double v = th.op[i] > 0 ? (tr * tr) / (th.op[i] * th.op[i]) : 0.0;
      if (v > worst) worst = v, wi = i;
    }
    rep.checks.push_back(make("theta_diagonal", "max_i Tr(Θ_i)² / ‖Θ_i‖_op², weight of the diagonal",
                              std::max(worst, 0.0), "<=",
                              t.theta_diagonal.value_or(default_diagonal_threshold(d)), head_label(wi)));
  }
  {
    double worst = -1;
    int wi = 0, wc = 0;
    for (int i = 0; i < m; ++i) {
      const double avg = th.fro[i] * th.fro[i] / d;
      const Eigen::RowVectorXd col2 = th.mats[i]->colwise().squaredNorm();
      Eigen::Index c = 0;
      const double mx = col2.size() ? col2.maxCoeff(&c) : 0.0;
      const double v = avg > 0 ? mx / avg : 0.0;
      if (v > worst) worst = v, wi = i, wc = static_cast<int>(c);
    }
    rep.checks.push_back(make("theta_heavy_column",
                              "max_i max_c ‖Θ_i[:,c]‖² / (‖Θ_i‖_F²/d), heaviest column against the average",
                              std::max(worst, 0.0), "<=", t.theta_heavy_column,
                              head_label(wi) + ", column " + std::to_string(wc)));
  }
  rep.checks.push_back(norm_ratio(th, "theta_norm_ratio", "Θ", t.theta_norm_ratio));
  {
    const int imax = static_cast<int>(std::max_element(th.fro.begin(), th.fro.end()) - th.fro.begin());
    rep.checks.push_back(make("theta_norm_bound", "max_i ‖Θ_i‖_F, logit scale", m ? th.fro[imax] : 0.0, "<=",
                              t.theta_norm_bound, head_label(imax)));
  }
  if (inst.inputs == InputKind::gaussian) {
    rep.checks.push_back(gaussian_non_arithmetic(th, t, d));
  } else {
    double worst = -1;
    int wi = 0;
    AtomMass wa;
    for (int i = 0; i < m; ++i) {
      const AtomMass a = logit_atom_mass(*th.mats[i], t);
      if (a.mass > worst) worst = a.mass, wi = i, wa = a;
    }
    std::string how = wa.exact ? "exact over all 2^{2d} pairs"
                               : "Monte Carlo, N = " + std::to_string(wa.pairs) + " fixed-seed pairs, resolution 1/N";
    rep.checks.push_back(make("theta_non_arithmetic",
                              "max_i max_v P[|x Θ_i x'ᵀ − v| ≤ δ‖Θ_i‖_F], x,x' uniform in {±1}^d, δ = " +
                                  fmt_num(t.atom_delta) + " (" + how + ")",
                              std::max(worst, 0.0), "<=",
                              t.theta_atom_mass.value_or(default_atom_mass_threshold(
                                  d, atom_mass_is_exact(d, t) ? 0 : std::max<std::int64_t>(t.atom_samples, 1))),
                              head_label(wi) + ", atom at " + fmt_num(wa.location, 6)));
  }

  // --- W ---
  rep.checks.push_back(incoherence(w, "w_incoherence", "W", t.w_incoherence));
  rep.checks.push_back(
      stable_rank(w, "w_stable_rank", "W", t.w_stable_rank.value_or(default_stable_rank_threshold(d))));
  rep.checks.push_back(norm_ratio(w, "w_norm_ratio", "W", t.w_norm_ratio));

  // --- regime ---
  const std::string md = "m=" + std::to_string(m) + ", d=" + std::to_string(d);
  rep.checks.push_back(make("heads_vs_log_d", "m, number of heads (few heads: m ≤ log2 d)", m, "<=",
                            t.max_heads.value_or(default_max_heads(d)), md));
  rep.checks.push_back(make("k_le_d", "k, sequence length (k ≤ d)", k, "<=", d,
                            "k=" + std::to_string(k) + ", d=" + std::to_string(d)));
  rep.checks.push_back(make("km_le_d", "k·m, rows of the certification matrix C (k·m ≤ d)",
                            static_cast<double>(k) * m, "<=", d,
                            "k=" + std::to_string(k) + ", " + md));
  return rep;
}

nlohmann::json to_json(const ConditionReport& rep) {
  auto num = [](double v) -> nlohmann::json {
    if (std::isfinite(v)) return v;
    return fmt_num(v);
  };
  nlohmann::json checks = nlohmann::json::array();
  int passed = 0;
  for (const auto& c : rep.checks) {
    passed += c.pass;
    checks.push_back({{"name", c.name},
                      {"description", c.description},
                      {"value", num(c.value)},
                      {"comparison", c.comparison},
                      {"threshold", num(c.threshold)},
                      {"pass", c.pass},
                      {"worst", c.worst}});
  }
  return {{"all_pass", rep.all_pass()},
          {"passed", passed},
          {"failed", static_cast<int>(rep.checks.size()) - passed},
          {"checks", std::move(checks)}};
}

std::string format_table(const ConditionReport& rep) {
  struct Row {
    std::string cols[7];
  };
  std::vector<Row> rows;
  rows.push_back({{"check", "value", "cmp", "threshold", "verdict", "worst", "description"}});
  for (const auto& c : rep.checks)
    rows.push_back({{c.name, fmt_num(c.value), c.comparison, fmt_num(c.threshold), c.pass ? "pass" : "FAIL",
                     c.worst, c.description}});
  // Columns 0..5 are ASCII and padded; the description (may hold UTF-8) comes last.
  size_t width[6] = {};
  for (const auto& r : rows)
    for (int i = 0; i < 6; ++i) width[i] = std::max(width[i], r.cols[i].size());
  std::ostringstream os;
  for (const auto& r : rows) {
    for (int i = 0; i < 6; ++i) {
      const bool right = (i == 1 || i == 3);  // numbers right-aligned
      const std::string pad(width[i] - r.cols[i].size(), ' ');
      os << (right ? pad + r.cols[i] : r.cols[i] + pad) << "  ";
    }
    os << r.cols[6] << '\n';
  }
  std::vector<std::string> failed;
  for (const auto& c : rep.checks)
    if (!c.pass) failed.push_back(c.name);
  if (failed.empty()) {
    os << "all " << rep.checks.size() << " checks pass\n";
  } else {
    os << failed.size() << " of " << rep.checks.size() << " checks fail:";
    for (size_t i = 0; i < failed.size(); ++i) os << (i ? ", " : " ") << failed[i];
    os << '\n';
  }
  return os.str();
}

}  // namespace mha

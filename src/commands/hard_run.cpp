#include "commands/hard_run.hpp"

#include "data/enumerate.hpp"
#include "hardness/sq_family.hpp"
#include "hardness/sq_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

namespace mha::commands {

using nlohmann::json;

namespace {

// Enumeration work budgets of the Gram check (docs/hardness.md).
constexpr double kGramBudget = 268435456.0;        // 2^28 accumulated products
constexpr double kGramLayerBudget = 1048576.0;     // 2^20 exact forward passes

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : s) {
    if (ch == ',') {
      parts.push_back(cur);
      cur.clear();
    } else if (ch != ' ') {
      cur.push_back(ch);
    }
  }
  parts.push_back(cur);
  return parts;
}

bool parse_int(const std::string& s, int& out) {
  if (s.empty() || s.size() > 9) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return false;
  out = std::stoi(s);
  return true;
}

std::string fmt(double v, const char* f = "%.3e") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

json agreement_json(const SqAgreement& a) {
  return {{"inputs", a.inputs}, {"max_abs_diff", a.max_abs_diff}, {"max_bound", a.max_bound},
          {"max_ratio", a.max_ratio}, {"violations", a.violations}, {"parameter_error", a.parameter_error}};
}

std::string agreement_line(const std::string& label, const SqAgreement& a) {
  std::ostringstream os;
  os << "  " << label << " on " << a.inputs << " input" << (a.inputs == 1 ? "" : "s") << ": max |diff| = " << fmt(a.max_abs_diff)
     << ", max bound = " << fmt(a.max_bound) << " (of which parameter rounding " << fmt(a.parameter_error)
     << "), max |diff|/bound = " << fmt(a.max_ratio, "%.3g") << ", entries over bound: " << a.violations << "\n";
  return os.str();
}

std::string set_string(const std::vector<int>& s) {
  std::ostringstream out;
  out << "{";
  for (size_t i = 0; i < s.size(); ++i) out << (i ? "," : "") << s[i];
  out << "}";
  return out.str();
}

json study_row_json(const SqStudyRow& r) {
  json jq = json::array(), jw = json::array();
  for (const auto& q : r.q) jq.push_back(rational_to_string(q));
  for (const auto& w : r.w) jw.push_back(rational_to_string(w));
  return {{"scheme", to_string(r.scheme)}, {"m", r.m}, {"ok", r.ok}, {"error", r.error}, {"q", jq}, {"w", jw},
          {"max_abs_w", r.max_abs_w}, {"sum_abs_w", r.sum_abs_w}, {"min_attention", r.min_attention},
          {"max_theta_norm", r.max_theta_norm}, {"forward_max_diff", r.forward_max_diff},
          {"forward_max_bound", r.forward_max_bound}};
}

// The row in the Markdown table and (when it holds) in the gnuplot data file.
void add_study_row_text(const SqStudyRow& r, std::ostringstream& table, std::ostringstream& data) {
  std::string qs, qcsv;
  for (size_t i = 0; i < r.q.size(); ++i) {
    // Appended piece by piece: GCC 12 warns (-Wstringop-overflow, a false
    // positive) on `const char* + std::string&&` once this is inlined.
    qs.append(i ? ", " : "").append(rational_to_string(r.q[i]));
    qcsv.append(i ? "," : "").append(rational_to_string(r.q[i]));
  }
  if (!r.ok) {
    table << "| " << to_string(r.scheme) << " | " << r.m << " | " << qs << " | " << r.error << " |||||\n";
    return;
  }
  table << "| " << to_string(r.scheme) << " | " << r.m << " | " << qs << " | " << fmt(r.max_abs_w, "%.3g") << " | "
        << fmt(r.sum_abs_w, "%.3g") << " | " << fmt(r.min_attention, "%.2e") << " | " << fmt(r.max_theta_norm, "%.2f") << " | "
        << fmt(r.forward_max_diff, "%.1e") << " | " << fmt(r.forward_max_bound, "%.1e") << " |\n";
  data << to_string(r.scheme) << "\t" << r.m << "\t" << fmt(r.max_abs_w, "%.6e") << "\t" << fmt(r.sum_abs_w, "%.6e") << "\t"
       << fmt(r.min_attention, "%.6e") << "\t" << fmt(r.max_theta_norm, "%.6e") << "\t" << fmt(r.forward_max_diff, "%.6e") << "\t"
       << fmt(r.forward_max_bound, "%.6e") << "\t" << qcsv << "\n";
}

}  // namespace

HardRun run_hard_study(const HardArgs& a) {
  const int max_m = a.study_max_m, d = a.d == 0 ? 16 : a.d;
  const int64_t samples = a.samples_given ? a.samples : 256;
  HardRun run;
  if (max_m < 1 || max_m > 12) return std::move(run).failed(kExitBadInput, "--study-max-m must be between 1 and 12");
  if (d < max_m + 1 || d > 1024) return std::move(run).failed(kExitBadInput, "--d for the study must be between max m + 1 and 1024");
  const auto rows = sq_conditioning_study(max_m, d, samples, a.seed, a.threads);
  json out = json::array();
  std::ostringstream table, data;
  table << "| q choice | m | q_0..q_m | max\\|w_i\\| | Σ\\|w_i\\| | min attention | max ‖Θ_i‖_F | max \\|F_fast − F_S\\| | bound |\n"
        << "|---|---|---|---|---|---|---|---|---|\n";
  data << "scheme\tm\tmax_abs_w\tsum_abs_w\tmin_attention\tmax_theta_norm\tforward_max_diff\tforward_max_bound\tq\n";
  for (const auto& r : rows) {
    out.push_back(study_row_json(r));
    add_study_row_text(r, table, data);
  }
  run.report = {{"study", out}, {"d", d}, {"samples", samples}, {"seed", a.seed}};
  run.text = "conditioning study (d = " + std::to_string(d) + ", " + std::to_string(samples) +
             " sampled inputs for the forward columns, seed " + std::to_string(a.seed) + ")\n\n" + table.str();
  run.study_data = data.str();
  for (const auto& r : rows)
    if (!r.ok) return std::move(run).failed(kExitFailedRun, "the study failed for " + std::string(to_string(r.scheme)) + " at m = " + std::to_string(r.m) + ": " + r.error);
  return run;
}

namespace {

// The family's parameters from the options (S and q parsed, defaults filled in):
// "" or what is wrong with them.
std::string hard_params(const HardArgs& a, SqFamilyParams& params) {
  params.d = a.d;
  params.m = a.m;
  params.p = a.p;
  params.q_out = a.q_out;
  if (a.m < 1) return "m must be at least 1, got " + std::to_string(a.m);
  if (a.m > 63) return "m must be at most 63, got " + std::to_string(a.m);
  if (a.subset.empty()) {
    params.subset = sq_default_subset(a.d, a.m, a.p);
  } else {
    for (const auto& part : split_commas(a.subset)) {
      int v = 0;
      if (!parse_int(part, v)) return "--subset: '" + part + "' is not an integer index";
      params.subset.push_back(v);
    }
    std::sort(params.subset.begin(), params.subset.end());
  }
  if (a.q.empty()) {
    params.q = sq_default_q(a.m);
  } else {
    for (const auto& part : split_commas(a.q)) {
      Rational r;
      if (!parse_rational(part, r)) return "--q: '" + part + "' is not a rational number (use 3, 7/4 or 1.25)";
      params.q.push_back(r);
    }
  }
  return validate_sq_params(params);
}

// Enumeration when 2d is small enough and no sample count was given; the MPFR
// checks default to 256, fewer for large d.
SqVerifyOptions hard_verify_options(const HardArgs& a) {
  SqVerifyOptions vo;
  vo.enumerate = 2 * a.d <= kMaxEnumerationBits && !a.samples_given;
  vo.samples = a.samples;
  vo.seed = a.seed;
  vo.precision = a.precision;
  vo.threads = a.threads;
  vo.mpfr_checks = a.mpfr_checks >= 0 ? a.mpfr_checks
                                      : std::max<int64_t>(8, std::min<int64_t>(256, (int64_t{1} << 22) / (int64_t{a.d} * a.d)));
  return vo;
}

// The exact Gram matrix of as many members' targets as the enumeration budgets
// allow (none when 2d is too large to enumerate).
std::optional<SqGram> hard_gram(const SqFamily& f, const HardArgs& a, const SqBound& bound) {
  if (2 * a.d > kMaxEnumerationBits) return std::nullopt;
  const double inputs = std::ldexp(1.0, 2 * a.d);
  int count = static_cast<int>(std::min(bound.members_double, 4096.0));
  while (count > 1 && inputs * count * (count + 1) / 2.0 > kGramBudget) --count;
  const bool from_layer = inputs * count <= kGramLayerBudget;
  return sq_target_gram(f, count, from_layer, a.threads);
}

json hard_provenance(const HardArgs& a, const SqFamilyParams& params, const Context& ctx) {
  json options = {{"d", a.d}, {"m", a.m}, {"p", a.p}, {"q_out", a.q_out}, {"subset", params.subset},
                  {"q", json::array()}, {"seed", a.seed}, {"precision", a.precision}, {"tolerance", a.tolerance}};
  for (const auto& q : params.q) options["q"].push_back(rational_to_string(q));
  json prov = ctx.provenance("hard", options);
  prov["seed"] = a.seed;
  return prov;
}

// What `hard` found, as it prints it, in one place for both forms of the report.
struct HardFindings {
  const HardArgs& a;
  const SqFamilyParams& params;
  const SqFamily& f;
  const Instance& inst;
  const SqVerifyReport& rep;
  const SqBound& bound;
  const std::optional<SqGram>& gram;
};

json hard_report_json(const HardFindings& h) {
  const HardArgs& a = h.a;
  const SqVerifyReport& rep = h.rep;
  const SqBound& bound = h.bound;
  json heads = json::array();
  for (int i = 0; i <= a.m; ++i)
    heads.push_back({{"q", rational_to_string(h.params.q[i])}, {"w", rational_to_string(h.f.w[i])},
                     {"w_double", rational_to_double(h.f.w[i])}, {"theta_double", h.inst.layer.heads[i].theta(h.params.subset[0], h.params.subset[0])}});
  json report = {
      {"construction", {{"d", a.d}, {"m", a.m}, {"k", 2}, {"p", a.p}, {"q_out", a.q_out}, {"S", h.params.subset},
                        {"heads", heads}, {"c", rational_to_string(h.f.c)}, {"system_verified", true}}},
      {"verification", {{"enumerated", rep.enumerated}, {"inputs", rep.inputs}, {"exact_mismatches", rep.exact_mismatches},
                        {"first_mismatch", rep.first_mismatch}, {"fast", agreement_json(rep.fast)},
                        {"mpfr_exported", agreement_json(rep.mpfr_exported)}, {"mpfr_full", agreement_json(rep.mpfr_full)},
                        {"precision_bits", rep.precision_bits}, {"seconds", rep.seconds}, {"ok", rep.ok}}},
      {"sq", {{"members", bound.members}, {"members_double", bound.members_double}, {"tolerance", bound.tolerance},
              {"per_query", bound.per_query}, {"impossible", bound.impossible},
              {"queries_deterministic", bound.queries_deterministic}, {"queries_randomized", bound.queries_randomized},
              {"cube_root", bound.cube_root}, {"target_error", 2.0}, {"target_relative_error", 1.0 / 6.0}}}};
  if (h.gram) {
    const SqGram& gram = *h.gram;
    report["sq"]["gram"] = {{"targets", gram.targets}, {"pairs", gram.pairs}, {"inputs", gram.inputs},
                            {"from_layer", gram.from_layer}, {"orthogonal", gram.orthogonal}, {"norms_two", gram.norms_two},
                            {"max_abs_offdiag_sum", gram.max_abs_offdiag_sum}, {"min_diag_sum", gram.min_diag_sum},
                            {"max_diag_sum", gram.max_diag_sum}};
  } else {
    report["sq"]["gram"] = nullptr;
  }
  return report;
}

// The text report's first parts: the construction and its verification.
void hard_text_family(std::ostringstream& os, const HardFindings& h) {
  const HardArgs& a = h.a;
  const SqVerifyReport& rep = h.rep;
  os << "SQ-hard family F_S (MATH.md §4): k = 2, d = " << a.d << ", m = " << a.m << " (" << a.m + 1 << " heads), p = " << a.p
     << ", q_out = " << a.q_out << ", S = " << set_string(h.params.subset) << " (0-based)\n\n"
     << "[construction] Θ_i = θ_i·diag(1_S), θ_i = −ln(q_i)/2;  W_i = w_i e_p e_q_outᵀ;  Σ_i w_i q_i^s/(1+q_i^s) = (−1)^s, s = 0.." << a.m << "\n";
  for (int i = 0; i <= a.m; ++i)
    os << "  i = " << i << ": q_i = " << rational_to_string(h.params.q[i]) << "   θ_i = " << fmt(h.inst.layer.heads[i].theta(h.params.subset[0], h.params.subset[0]), "%.17g")
       << "   w_i = " << rational_to_string(h.f.w[i]) << " ≈ " << fmt(rational_to_double(h.f.w[i]), "%.17g") << "\n";
  os << "  c = Σ w_i = " << rational_to_string(h.f.c) << ";  A w = b checked exactly\n\n"
     << "[verification] F_S(X)[a,q_out] = c·x_{a,p} + (x_{a',p} − x_{a,p})·χ_S(x_0⊙x_1), every other entry 0\n"
     << "  inputs: " << (rep.enumerated ? "all 2^" + std::to_string(2 * a.d) + " = " + std::to_string(rep.inputs) + " (enumerated)"
                                        : std::to_string(rep.inputs) + " sampled (seed " + std::to_string(a.seed) + ")")
     << "\n  exact rational forward pass equals the closed form: "
     << (rep.exact_mismatches == 0 ? "yes, on every input (both rows, every entry)"
                                   : "NO, on " + std::to_string(rep.exact_mismatches) + " inputs (first: " + std::to_string(rep.first_mismatch) + ")")
     << "\n"
     << agreement_line("double (fast path) vs exact", rep.fast)
     << agreement_line("MPFR " + std::to_string(rep.precision_bits) + " bits, exported double parameters, vs exact", rep.mpfr_exported)
     << agreement_line("MPFR " + std::to_string(rep.precision_bits) + " bits, full-precision parameters, vs exact", rep.mpfr_full)
     << "  (bounds: proofs/sq_family.md §5; " << fmt(rep.seconds, "%.2f") << " s)\n\n";
}

// The text report's last part: the SQ lower bound.
void hard_text_sq(std::ostringstream& os, const HardFindings& h) {
  const HardArgs& a = h.a;
  const SqBound& bound = h.bound;
  os << "[SQ lower bound] proofs/sq_family.md §3–4\n"
     << "  members: C(d−1, m) = C(" << a.d - 1 << ", " << a.m << ") = " << bound.members
     << " pairwise orthogonal centred targets g_S = F_S[0,q_out] − c·x_{0,p}\n";
  if (h.gram) {
    const SqGram& gram = *h.gram;
    os << "  exact Gram by enumeration (" << gram.targets << " of them, " << gram.pairs << " pairs, all " << gram.inputs << " inputs, targets from "
       << (gram.from_layer ? "the exact forward pass of each member" : "the closed form") << "): "
       << "E[g_S g_T] = 0 for S ≠ T: " << (gram.orthogonal ? "yes" : "NO") << ";  E[g_S²] = 2: " << (gram.norms_two ? "yes" : "NO") << "\n";
  } else {
    os << "  exact Gram: not enumerated (2d = " << 2 * a.d << " > " << kMaxEnumerationBits << "; the proof covers every d)\n";
  }
  os << "  tolerance τ = " << fmt(a.tolerance, "%g") << ": one query distinguishes at most H = ⌈1/(4τ²)⌉ − 1 = " << bound.per_query << " members\n";
  if (bound.impossible)
    os << "  τ ≥ 1/2: no statistical query distinguishes any two members; no SQ learner reaches error < 2\n";
  else
    os << "  an SQ learner reaching E‖F̂ − F_S‖_F² < 2 (relative error < 1/6) on every member makes\n"
       << "    ≥ " << bound.queries_deterministic << " statistical queries if deterministic,  ≥ " << bound.queries_randomized
       << " if randomized with success ≥ 2/3\n";
  os << "  whatever τ: max(queries, 1/τ) > (4(N − 1))^{1/3} = " << fmt(bound.cube_root, "%.4g") << "\n";
}

}  // namespace

HardRun run_hard_family(const HardArgs& a, const Context& ctx) {
  HardRun run;
  if (!a.d_given || !a.m_given) return std::move(run).failed(kExitBadInput, "--d and --m are required (or --study)");
  if (!(a.tolerance > 0.0 && a.tolerance <= 1.0))
    return std::move(run).failed(kExitBadInput, "--tolerance must be in (0, 1], got " + fmt(a.tolerance, "%g"));
  SqFamilyParams params;
  if (auto e = hard_params(a, params); !e.empty()) return std::move(run).failed(kExitBadInput, e);
  const SqBuildResult built = build_sq_family(params);
  if (!built.ok) return std::move(run).failed(kExitBadInput, built.error);
  const SqFamily& f = built.family;
  Instance inst = sq_export_instance(f);
  const SqVerifyReport rep = sq_verify(f, inst.layer, hard_verify_options(a));
  if (!rep.error.empty()) return std::move(run).failed(kExitFailedRun, rep.error);
  const SqBound bound = sq_query_bound(a.d, a.m, a.tolerance);
  const std::optional<SqGram> gram = hard_gram(f, a, bound);
  inst.provenance_json = hard_provenance(a, params, ctx).dump();
  const bool ok = rep.ok && (!gram || (gram->orthogonal && gram->norms_two));
  const HardFindings findings{a, params, f, inst, rep, bound, gram};
  run.report = hard_report_json(findings);
  std::ostringstream os;
  hard_text_family(os, findings);
  hard_text_sq(os, findings);
  run.text = os.str();
  if (!ok) return std::move(run).failed(kExitFailedRun, "verification failed (see the report above); no instance written");
  run.instance = std::move(inst);
  return run;
}

}  // namespace mha::commands

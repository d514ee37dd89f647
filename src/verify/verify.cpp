#include "verify/verify.hpp"

#include "numeric/rng.hpp"
#include "stages/stage2/sculpt.hpp"
#include "stages/stage5/check.hpp"
#include "stages/stage5/span_membership_reference.hpp"
#include "stages/stage5/widths.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

namespace mha {

namespace {

Eigen::VectorXd flat(const MatD& theta) { return Eigen::Map<const Eigen::VectorXd>(theta.data(), theta.size()); }

MatD mean_theta(const Layer& layer) {
  MatD mean = MatD::Zero(layer.d(), layer.d());
  for (const auto& h : layer.heads) mean += h.theta / double(layer.m());
  return mean;
}

// ---- 2 and 4: τ as the learner adapts it (stage4/resculpt.hpp), from the data: the
// median relative residual of the rows that pass every other test, midway between two
// neighbouring residuals so that no row sits on τ itself and both sides occur.
CertifyOptions median_tau(const std::vector<CertificationRow>& rows, const CertifyOptions& co) {
  CertifyOptions open = co;
  open.tau = std::numeric_limits<double>::infinity();
  std::vector<double> eligible;
  for (const CertificationRow& r : rows) {
    const RowCertificate c = certify_row_fast(r.x, r.y, r.b, r.row, open);
    if (c.verdict == RowVerdict::certified) eligible.push_back(c.relative_residual);
  }
  CertifyOptions used = co;
  std::sort(eligible.begin(), eligible.end());
  if (eligible.size() >= 2) {
    const size_t i = eligible.size() / 2;
    used.tau = 0.5 * (eligible[i - 1] + eligible[i]);
  }
  return used;
}

Comparison verify_certification(const std::string& stage, const Instance& inst, const SampleOracle& oracle,
                                const MatD& w_hat, const CertifyOptions& co, const VerifyOptions& o,
                                const FastPaths& fast) {
  const std::vector<CertificationRow> rows = certification_rows(oracle, w_hat, 0, o.certify_samples);
  BodyOptions bo;
  bo.radius = SculptOptions{}.radius;
  bo.seed = o.seed;
  return check_certification(stage, rows, median_tau(rows, co), inst.layer.m(), &inst.layer, bo, fast.certify,
                             fast.slabs);
}

// ---- 3: stage 3 with the mean of the true Θ_i as its proxy.
MarginOptions verify_margin_options(const VerifyOptions& o) {
  MarginOptions mo;
  mo.pilot_samples = 20000;
  mo.max_samples = 4000000;
  mo.accept_fraction = 1e-3;
  mo.threads = o.threads;
  return mo;
}

// ---- 3 (proxy) and 5: the body sculpted with the exact W_Σ.
SculptResult verify_body(const Instance& inst, const SampleOracle& oracle, const VerifyOptions& o) {
  SculptOptions so;
  so.certify.sigma_min = default_sigma_min(inst.d(), inst.k, inst.layer.m());
  so.threads = o.threads;
  return sculpt_body(oracle, inst.layer.w_sum(), inst.layer.m(), so);
}

Comparison verify_span(const Instance& inst, const SculptResult& sculpted, const FastPaths& fast) {
  const int m = inst.layer.m();
  if (sculpted.report.rows_certified == 0) {
    Comparison c;
    c.stage = "5";
    c.detail = "no row was certified: no body to read the span from";
    return c;
  }
  const SpanResult span = fast.span(sculpted.body, sculpted.centre, m, SpanOptions{});
  Comparison c = check_span(sculpted.body, span, m, SpanOptions{});
  // A diagnostic, not part of the verdict: is the body thin across the hull?
  const BodyWidths widths = body_widths(sculpted.body, sculpted.centre, m, WidthsOptions{});
  c.detail += "; diagnostic: the body is " + std::string(widths.thin ? "" : "not ") + "thin across the hull by LP widths (" +
              std::to_string(widths.dimension) + " wide directions, m − 1 = " + std::to_string(m - 1) + ")";
  // The paper variant's stage 5: the span by membership queries around K's minimum-norm point.
  const MembershipSpan ms = fast.span_membership(sculpted.body, m, fast.min_norm(sculpted.body), MembershipSpanOptions{});
  const Comparison membership = check_span_membership(sculpted.body, ms, m);
  add_part(c, as_part(membership, "membership: optima"));
  for (ComparisonPart part : membership.parts) {
    part.name = "membership: " + part.name;
    add_part(c, std::move(part));
  }
  return c;
}

Comparison verify_min_norm_point(const SculptResult& sculpted, const FastPaths& fast) {
  return check_min_norm_point(sculpted.body, fast.min_norm);
}

Comparison verify_stage6(const Instance& inst, const SampleOracle& oracle, const VerifyOptions& o, const FastPaths& fast) {
  std::vector<MatD> thetas;
  for (const auto& h : inst.layer.heads) thetas.push_back(h.theta);
  NetOptions no;
  no.train_samples = o.net_samples;
  no.validation_samples = o.net_samples;
  no.max_tuples = o.net_max_tuples;
  // The true hull: the mean of the Θ_i and the heads' hull directions.
  return check_stage6(oracle, thetas, 0, o.w_samples, flat(mean_theta(inst.layer)), head_hull_directions(inst.layer), no,
                      fast.w_least_squares, fast.net);
}

// ---- polish: the truth with every parameter moved by `relative` of its norm.
Layer perturbed(const Layer& layer, double relative, uint64_t seed) {
  Layer out = layer;
  for (size_t i = 0; i < out.heads.size(); ++i) {
    auto& h = out.heads[i];
    const MatD dt = gaussian_matrix(seed, Stream::verify, i, 0, layer.d());
    const MatD dw = gaussian_matrix(seed, Stream::verify, i, 1, layer.d());
    h.theta += relative * h.theta.norm() / dt.norm() * dt;
    h.w += relative * h.w.norm() / dw.norm() * dw;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& verify_stage_names() {
  static const std::vector<std::string> names = {"forward", "1", "2", "3", "4", "5", "6", "polish"};
  return names;
}

std::vector<Comparison> verify_instance(const Instance& inst, const std::vector<std::string>& stages,
                                        const VerifyOptions& o, const FastPaths& fast) {
  for (const auto& s : stages)
    if (std::find(verify_stage_names().begin(), verify_stage_names().end(), s) == verify_stage_names().end())
      throw std::invalid_argument("unknown stage '" + s + "' (forward, 1, 2, 3, 4, 5, 6, polish or all)");
  auto wanted = [&](const std::string& s) { return std::find(stages.begin(), stages.end(), s) != stages.end(); };
  const int d = inst.d(), k = inst.k, m = inst.layer.m();
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  std::vector<Comparison> out;
  if (wanted("forward"))
    out.push_back(check_forward(inst.layer, draw_inputs(o.seed, Stream::inputs, inst.inputs, k, d, 0, o.forward_samples, 1),
                                fast.forward));
  if (wanted("1")) out.push_back(check_stage1(oracle, nullptr, 0, o.stage1_samples, fast.stage1));
  CertifyOptions co;
  co.sigma_min = default_sigma_min(d, k, m);
  if (wanted("2")) out.push_back(verify_certification("2", inst, oracle, inst.layer.w_sum(), co, o, fast));
  std::optional<SculptResult> body;
  if (wanted("3") || wanted("5")) body = verify_body(inst, oracle, o);
  if (wanted("3") || wanted("4")) {
    const MarginOptions mo = verify_margin_options(o);
    const std::vector<MatD> proxies = {mean_theta(inst.layer)};
    const MarginResult s3 = fast.margin(oracle, proxies, mo, nullptr);
    if (wanted("3")) {
      Comparison c = check_margin(oracle, proxies, s3, mo.first_sample, o.selection_samples);
      add_part(c, as_part(verify_min_norm_point(*body, fast), "proxy"));
      out.push_back(c);
    }
    if (wanted("4")) {
      if (s3.w_sum.size() == 0) {
        Comparison c;
        c.stage = "4";
        c.detail = "stage 3 gave no Ŵ to certify with";
        out.push_back(c);
      } else {
        CertifyOptions c4 = co;
        c4.w_error = s3.report.standard_error;
        c4.v_min_rule = CertifyOptions::VMinRule::pairwise;  // the extended learner's rule in rounds ≥ 1
        out.push_back(verify_certification("4", inst, oracle, s3.w_sum, c4, o, fast));
      }
    }
  }
  if (wanted("5")) out.push_back(verify_span(inst, *body, fast));
  if (wanted("6")) out.push_back(verify_stage6(inst, oracle, o, fast));
  if (wanted("polish")) {
    const Layer layer = o.polish_layer ? *o.polish_layer : perturbed(inst.layer, o.polish_perturbation, o.seed);
    out.push_back(check_polish(layer, oracle, 0, o.polish_samples, fast.polish_iteration));
  }
  return out;
}

VerifyOutcome verify_outcome(const std::vector<Comparison>& rows) {
  bool incomplete = false;
  for (const auto& c : rows) {
    if (disagrees(c)) return VerifyOutcome::disagree;
    incomplete |= std::string(verdict(c)) != "agree";  // not compared, or nothing decided
  }
  return incomplete ? VerifyOutcome::incomplete : VerifyOutcome::agree;
}

}  // namespace mha

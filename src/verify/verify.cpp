#include "verify/verify.hpp"

#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/forward_reference.hpp"
#include "model/reference.hpp"
#include "numeric/rng.hpp"
#include "numeric/tolerance.hpp"
#include "stages/certify_reference.hpp"
#include "stages/polish_reference.hpp"
#include "stages/stage1_reference.hpp"
#include "stages/stage2_sculpt.hpp"
#include "stages/w_least_squares.hpp"
#include "verify/parts.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

namespace mha {

namespace {

namespace tol = mha::tolerance;

std::string format(const char* fmt, double a = 0, double b = 0, double c = 0, double d = 0) {
  char line[256];
  std::snprintf(line, sizeof line, fmt, a, b, c, d);
  return line;
}

// Keeps the item with the largest difference/bound ratio.
void record(Comparison& c, double difference, double bound) {
  const double ratio = difference / bound;
  if (c.compared == 0 || ratio > c.slack || !(ratio == ratio)) {
    c.slack = ratio;
    c.max_difference = difference;
    c.bound = bound;
  }
  ++c.compared;
}

// ---- forward: the fast pass against MPFR on the same X, entrywise, within
// forward_error_bound + half an ulp of the reference (its rounding to double).
Comparison verify_forward(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  const InputBatch batch = draw_inputs(o.seed, Stream::inputs, inst.inputs, inst.k, inst.d(), 0, o.forward_samples, 1);
  std::vector<MatD> fast_y;
  for (int64_t i = 0; i < batch.count; ++i) fast_y.push_back(fast.forward(inst.layer, batch.sample(i)));
  return escalate([&](unsigned bits) {
    Comparison c;
    c.stage = "forward";
    c.quantity = "|F_fast − F_ref| per entry";
    c.agree = true;
    for (int64_t i = 0; i < batch.count; ++i) {
      const MatD x = batch.sample(i);
      const MatD ref = forward_mpfr(inst.layer, x, bits);
      const MatD bound = forward_error_bound(inst.layer, x) + ref.cwiseAbs() * tol::kDoubleUnitRoundoff;
      for (Eigen::Index e = 0; e < ref.size(); ++e) {
        const double diff = std::abs(fast_y[i].data()[e] - ref.data()[e]);
        record(c, diff, bound.data()[e]);
        if (!(diff <= bound.data()[e])) c.agree = false;
      }
    }
    c.detail = format("%.0f samples", double(batch.count));
    return c;
  });
}

// ---- 1: stage 1's statistic with fast labels against the same statistic with MPFR labels.
Comparison verify_stage1(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  return escalate([&](unsigned bits) {
    const Stage1SameSampleCheck s = stage1_same_sample_check(inst, o.seed, o.stage1_samples, bits, fast.stage1);
    Comparison c;
    c.stage = "1";
    c.quantity = "|Ŵ_fast − Ŵ_ref| per entry";
    for (Eigen::Index e = 0; e < s.fast.size(); ++e)
      record(c, std::abs(s.fast.data()[e] - s.reference.data()[e]), s.bound.data()[e]);
    c.agree = s.max_ratio <= 1.0;
    c.detail = format("%.0f samples", double(s.samples));
    return c;
  });
}

// ---- 2 and 4: certification of every row of `samples` samples with Ŵ.
Comparison verify_certification(const std::string& stage, const Instance& inst, const MatD& w_hat,
                                const CertifyOptions& co, const VerifyOptions& o, const FastPaths& fast) {
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const LabelledBatch batch = oracle.draw(0, o.certify_samples, 1);
  const int k = inst.k, d = inst.d();
  struct Row {
    MatD x, y, b;
    int row;
    RowCertificate cert;
  };
  std::vector<Row> rows;
  for (int64_t s = 0; s < batch.x.count; ++s) {
    const MatD x = batch.x.sample(s);
    const MatD y = Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d);
    for (int a = 0; a < k; ++a) rows.push_back({x, y, x * w_hat, a, {}});
  }
  // τ as the learner adapts it (stage4_resculpt.hpp): a quantile — here the
  // median — of the relative residuals of the rows that pass every other test,
  // so that both sides of the residual threshold occur.
  CertifyOptions open = co;
  open.tau = std::numeric_limits<double>::infinity();
  std::vector<double> eligible;
  for (const Row& r : rows) {
    const RowCertificate c = certify_row_fast(r.x, r.y, r.b, r.row, open);
    if (c.verdict == RowVerdict::certified) eligible.push_back(c.relative_residual);
  }
  // Midway between two neighbouring residuals, so that no row sits on τ itself.
  CertifyOptions used = co;
  std::sort(eligible.begin(), eligible.end());
  if (eligible.size() >= 2) {
    const size_t i = eligible.size() / 2;
    used.tau = 0.5 * (eligible[i - 1] + eligible[i]);
  }
  for (Row& r : rows) r.cert = fast.certify(r.x, r.y, r.b, r.row, used);
  std::vector<std::vector<SlabConstraint>> fast_slabs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].cert.verdict == RowVerdict::certified) fast_slabs[i] = fast.slabs(rows[i].x, rows[i].row, rows[i].cert);
  BodyOptions bo;
  bo.radius = SculptOptions{}.radius;
  bo.seed = o.seed;
  return escalate([&](unsigned bits) {
    Comparison c;
    c.stage = stage;
    c.quantity = "‖v̂_fast − v*‖ per row; verdicts";
    c.agree = true;
    std::map<std::string, int> verdicts;
    int disagreements = 0;
    std::vector<CertificationCheck> checks;
    checks.reserve(rows.size());
    for (const Row& r : rows) {
      checks.push_back(compare_certification_row(r.x, r.y, r.b, r.row, used, r.cert, bits));
      const CertificationCheck& check = checks.back();
      record(c, check.v_difference, check.v_bound > 0 ? check.v_bound : 1.0);
      c.undecided += check.undecided;
      ++verdicts[to_string(check.reference)];
      if (!check.agree()) {
        c.agree = false;
        disagreements += check.fast != check.reference && !check.undecided;
      }
    }
    std::string counts;
    for (const auto& [name, n] : verdicts) counts += (counts.empty() ? "" : ", ") + name + " " + std::to_string(n);
    c.detail = format("τ = %.3g; ", used.tau) + "reference verdicts: " + counts + "; verdict disagreements " +
               std::to_string(disagreements) + ", undecided " + std::to_string(c.undecided);
    std::vector<BodyRow> body_rows(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) body_rows[i] = {fast_slabs[i], &checks[i]};
    for (ComparisonPart& part : compare_body(body_rows, inst.layer, bo, bits)) {
      part.precision = bits;
      add_part(c, std::move(part));
    }
    return c;
  });
}

// ---- 3: the margin stage's final fit on its own events.
struct Stage3Run {
  MarginResult result;
  Comparison comparison;
};

Stage3Run verify_stage3(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  MatD proxy = MatD::Zero(inst.d(), inst.d());
  for (const auto& h : inst.layer.heads) proxy += h.theta / double(inst.layer.m());
  MarginOptions mo;
  mo.pilot_samples = 20000;
  mo.max_samples = 4000000;
  mo.accept_fraction = 1e-3;
  mo.threads = o.threads;
  Stage3Run run{fast.stage3(oracle, proxy, mo), {}};
  const MarginResult& r = run.result;
  if (r.fit_tokens.rows() < inst.d() || r.w_sum.size() == 0) {
    run.comparison.stage = "3";
    run.comparison.detail = "the margin stage made no fit: " + std::to_string(r.report.events) +
                            " large-margin events whose tokens have rank " + std::to_string(r.report.event_rank) +
                            " < d = " + std::to_string(inst.d());
    return run;
  }
  run.comparison = escalate(
      [&](unsigned bits) { return compare_least_squares(r.fit_tokens, r.fit_labels, r.w_sum, bits); },
      {128, 256, kExactRationals});
  run.comparison.stage = "3";
  run.comparison.detail += format(", %.0f events", double(r.fit_tokens.rows()));
  add_part(run.comparison, escalate_part([&](unsigned bits) {
             return compare_selection(oracle, proxy, r, mo.first_sample, o.selection_samples, bits);
           }));
  return run;
}

// ---- 5: the span, fast (SVD of the body's constraints) against LP widths.
Comparison verify_stage5(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const int m = inst.layer.m(), d = inst.d(), k = inst.k;
  SculptOptions so;
  so.certify.sigma_min = default_sigma_min(d, k, m);
  so.threads = o.threads;
  const SculptResult sculpted = sculpt_body(oracle, inst.layer.w_sum(), m, so);
  Comparison c;
  c.stage = "5";
  c.quantity = "largest principal angle, fast vs LP-width hull directions (rad)";
  if (sculpted.report.rows_certified == 0) {
    c.detail = "no row was certified: no body to read the span from";
    return c;
  }
  SpanOptions sp;
  const SpanResult span = fast.span(sculpted.body, sculpted.centre, m, sp);
  c.precision = kCertifiedDouble;  // LP widths certified a posteriori (geometry/convex_body.hpp)
  c.compared = 1;
  c.bound = sp.max_angle;
  if (m == 1) {  // no hull directions: the span is x0's direction alone
    c.agree = span.dimension_fast == 0 && span.dimension_reference == 0;
    c.detail = "m = 1: no hull directions";
    return c;
  }
  // The cross-check's premise (proofs/span_by_widths.md): K is thin across the
  // hull, so the widths single out m − 1 wide directions. When the reference
  // finds another number, the body does not define the span and the two
  // readings are not comparable: reported, not counted as a disagreement.
  if (span.dimension_reference != m - 1) {
    c.compared = 0;
    c.detail = std::to_string(span.dimension_reference) + " wide directions by LP widths (m − 1 = " + std::to_string(m - 1) +
               "): the body sculpted from " + std::to_string(sculpted.report.rows_certified) +
               " certified rows is not thin across the hull, so it does not define the span";
    return c;
  }
  c.max_difference = largest_principal_angle(span.hull_directions, span.reference_directions);
  c.slack = c.max_difference / c.bound;
  c.agree = span.dimension_fast == m - 1 && span.dimension_reference == m - 1 && c.max_difference <= c.bound;
  c.detail = "dimensions fast " + std::to_string(span.dimension_fast) + ", reference " +
             std::to_string(span.dimension_reference) + " (m − 1 = " + std::to_string(m - 1) + "); " +
             std::to_string(sculpted.report.rows_certified) + " rows certified" +
             (span.message.empty() ? "" : "; " + span.message);
  return c;
}

// ---- 6, part "net": the exhaustive level on the true hull, coarse and on few samples.
ComparisonPart verify_net(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const int m = inst.layer.m(), d = inst.d();
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(int64_t{d} * d);
  for (const auto& h : inst.layer.heads) x0 += Eigen::Map<const Eigen::VectorXd>(h.theta.data(), x0.size()) / m;
  Eigen::MatrixXd spread(x0.size(), std::max(m - 1, 0));
  for (int i = 1; i < m; ++i)
    spread.col(i - 1) = Eigen::Map<const Eigen::VectorXd>(inst.layer.heads[i].theta.data(), x0.size()) -
                        Eigen::Map<const Eigen::VectorXd>(inst.layer.heads[0].theta.data(), x0.size());
  Eigen::MatrixXd dirs(std::max(m - 1, 0), x0.size());
  if (m > 1) {
    const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(spread).householderQ() *
                              Eigen::MatrixXd::Identity(x0.size(), m - 1);
    dirs = q.transpose();
  }
  NetOptions no;
  no.train_samples = o.net_samples;
  no.validation_samples = o.net_samples;
  no.max_tuples = o.net_max_tuples;
  ComparisonPart failed;
  failed.name = "net";
  NetCandidates candidates;
  try {
    candidates = fast.net(oracle, x0, dirs, m, no);
  } catch (const std::exception& e) {
    failed.detail = std::string("the net could not be formed: ") + e.what();
    return failed;
  }
  return escalate_part([&](unsigned bits) { return compare_net(oracle, candidates, bits); });
}

// ---- 6: least squares for W at the true Θ.
Comparison verify_stage6(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const LabelledBatch batch = oracle.draw(0, o.w_samples, 1);
  const int k = inst.k, d = inst.d(), m = inst.layer.m();
  MatD design(batch.x.count * k, m * d), labels(batch.x.count * k, d);
  for (int64_t s = 0; s < batch.x.count; ++s) {
    const MatD x = batch.x.sample(s);
    std::vector<MatD> attentions;
    for (const auto& h : inst.layer.heads) attentions.push_back(attention<double>(h.theta, x));
    design.middleRows(s * k, k) = w_design_rows<double>(attentions, x);
    labels.middleRows(s * k, k) = Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d);
  }
  const std::optional<MatD> w = fast.w_least_squares(design, labels);
  if (!w) {
    Comparison c;
    c.stage = "6";
    c.detail = "the fast path found the design rank deficient";
    return c;
  }
  Comparison c = escalate([&](unsigned bits) { return compare_least_squares(design, labels, *w, bits); },
                          {128, 256, kExactRationals});
  c.stage = "6";
  add_part(c, verify_net(inst, o, fast));
  return c;
}

// ---- polish: the relative training error at a layer, and the reference gradient.
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

Comparison verify_polish(const Instance& inst, const VerifyOptions& o, const FastPaths& fast) {
  const Layer layer = o.polish_layer ? *o.polish_layer : perturbed(inst.layer, o.polish_perturbation, o.seed);
  const SampleOracle oracle(inst, o.seed, Stream::inputs);
  const LabelledBatch batch = oracle.draw(0, o.polish_samples, 1);
  const int k = inst.k, d = inst.d();
  std::vector<MatD> xs, ys;
  double fast_sum = 0, y_sum = 0;
  for (int64_t s = 0; s < batch.x.count; ++s) {
    xs.push_back(batch.x.sample(s));
    ys.push_back(Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d));
    fast_sum += fast.squared_error(layer, xs.back(), ys.back());
    y_sum += ys.back().squaredNorm();
  }
  Comparison c = escalate([&](unsigned bits) { return compare_objective(layer, xs, ys, fast_sum / y_sum, bits); });
  const double gradient = reference_gradient_norm(layer, xs, ys, o.gradient_samples, c.precision);
  c.detail += format("; reference gradient norm %.2e on %.0f samples", gradient,
                     double(std::min<int64_t>(o.gradient_samples, batch.x.count)));
  return c;
}

}  // namespace

FastPaths default_fast_paths() {
  FastPaths f;
  f.forward = [](const Layer& layer, const MatD& x) {
    const FastForward ff(layer);
    MatD y(x.rows(), x.cols());
    std::vector<double> scratch;
    if (!ff.forward_dense(x.data(), static_cast<int>(x.rows()), y.data(), scratch))
      y.setConstant(std::numeric_limits<double>::quiet_NaN());
    return y;
  };
  f.stage1 = [](const SampleSource& s, const Stage1Options& o) { return stage1_estimate_wsum(s, o); };
  f.certify = [](const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions& o) {
    return certify_row_fast(x, y, b, row, o);
  };
  f.stage3 = [](const SampleSource& s, const MatD& proxy, const MarginOptions& o) { return refine_wsum(s, proxy, o); };
  f.span = [](const ConvexBody& body, const ConvexBody::Centre& centre, int m, const SpanOptions& o) {
    return find_span(body, centre, m, o);
  };
  f.w_least_squares = [](const MatD& design, const MatD& labels) { return solve_w_stack(design, labels); };
  f.slabs = [](const MatD& x, int row, const RowCertificate& cert) { return slabs_of_row(x, row, cert); };
  f.net = [](const SampleSource& s, const Eigen::VectorXd& x0, const Eigen::MatrixXd& dirs, int m, const NetOptions& o) {
    return net_candidates(s, x0, dirs, m, o);
  };
  f.squared_error = [](const Layer& layer, const MatD& x, const MatD& y) {
    const FastForward ff(layer);
    MatD out(x.rows(), x.cols());
    std::vector<double> scratch;
    if (!ff.forward_dense(x.data(), static_cast<int>(x.rows()), out.data(), scratch))
      return std::numeric_limits<double>::infinity();
    return (out - y).squaredNorm();
  };
  return f;
}

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
  std::vector<Comparison> out;
  if (wanted("forward")) out.push_back(verify_forward(inst, o, fast));
  if (wanted("1")) out.push_back(verify_stage1(inst, o, fast));
  CertifyOptions co;
  co.sigma_min = default_sigma_min(d, k, m);
  if (wanted("2")) out.push_back(verify_certification("2", inst, inst.layer.w_sum(), co, o, fast));
  if (wanted("3") || wanted("4")) {
    Stage3Run s3 = verify_stage3(inst, o, fast);
    if (wanted("3")) out.push_back(s3.comparison);
    if (wanted("4")) {
      if (s3.result.w_sum.size() == 0) {
        Comparison c;
        c.stage = "4";
        c.detail = "stage 3 gave no Ŵ to certify with";
        out.push_back(c);
      } else {
        CertifyOptions c4 = co;
        c4.w_error = s3.result.report.standard_error;
        c4.v_min_rule = CertifyOptions::VMinRule::pairwise;  // the extended learner's rule in rounds ≥ 1
        out.push_back(verify_certification("4", inst, s3.result.w_sum, c4, o, fast));
      }
    }
  }
  if (wanted("5")) out.push_back(verify_stage5(inst, o, fast));
  if (wanted("6")) out.push_back(verify_stage6(inst, o, fast));
  if (wanted("polish")) out.push_back(verify_polish(inst, o, fast));
  return out;
}

VerifyOutcome verify_outcome(const std::vector<Comparison>& rows) {
  bool incomplete = false;
  for (const auto& c : rows) {
    if (c.compared > 0 && !c.agree) return VerifyOutcome::disagree;
    incomplete |= c.compared == 0;
  }
  return incomplete ? VerifyOutcome::incomplete : VerifyOutcome::agree;
}

}  // namespace mha

#include "learn/report.hpp"

#include "learn/open_choices.hpp"
#include "learn/report_fields.hpp"

#include "util/format.hpp"

#include <sstream>

namespace mha {

using nlohmann::json;

std::vector<std::pair<std::string, std::string>> variant_choices(LearnVariant v) {
  if (v == LearnVariant::paper) {
    std::vector<std::pair<std::string, std::string>> out = {{"rows", "row 1 of each sample only"},
            {"v_min", "none beyond the lemma's v̂_j > δ"},
            {"tau", "stage 4: twice the residual the lemma's W-error term leaves (at least paper_tau), over the whole budget; stage 2: a pilot's quantile (the crude Ŵ's error is not bounded)"},
            {"stage 2 widths", "heuristic: the lemma's with σ_min = 10³ and no W error (the crude Ŵ makes the lemma's vacuous)"},
            {"stage 3 proxy", "the minimum-norm point of K (dual active set); K empty: the least-squares centre x0 (the least common widening that would make K meet is reported)"},
            {"stage 3 margin", "the largest proxy margins over the whole budget, at least M = ln(2(k−1)/paper_margin_target) (margin-stability lemma): the shortest prefix with 16·d rows whose tokens have rank d, from a pool of 256·d"},
            {"stage 5", "membership queries: cutting planes through K's separation oracle (at most max(16, n/8) cuts a query) along m random directions, the SVD of the optimisers' differences, K's minimum-norm point"},
            {"stage 6", "the exhaustive net over the span (m axes, ‖Θ‖_F ≤ R, cell centres meeting the ball, at most --net-tuples tuples) only"},
            {"rounds", "one pass: 1, 2, 3, 4, 5, 6; the stage-4 layer is returned"},
            {"open choices", "MATH.md §3.9, the paper variant's open choices: the \"open NN\" lines"}};
    for (auto& c : paper_open_choices()) out.push_back(std::move(c));
    return out;
  }
  return {{"rows", "every row"},
          {"v_min", "0.05, per pair of entries (rounds ≥ 1; every entry in round 0)"},
          {"tau", "adaptive: the smallest residuals over the whole budget for 8·d² slabs (rounds ≥ 1; a pilot's quantile in round 0)"},
          {"duplicates", "identical slabs dropped (every round)"},
          {"stage 3 margin", "adaptive: the top accept_fraction of a pilot's margins"},
          {"rounds", "3 ⇄ 4 while the estimates improve, then a final stage-4 round with final_sculpt_samples; the best by validation"},
          {"stage 6", "the exhaustive net, then pattern-search refinement"}};
}

std::vector<std::string> LearnReport::disagreements() const {
  std::vector<std::string> lines;
  for (const ReferenceCheck& c : reference)
    if (disagrees(c.comparison))
      lines.push_back("stage " + c.comparison.stage + (c.round >= 0 ? " (round " + std::to_string(c.round) + ")" : "") +
                      ": " + disagreement(c.comparison));
  return lines;
}

namespace {

// The report's writer: each field of report_fields.hpp in the report's form.
struct ReportWriter {
  json& out;

  template <class T>
  static bool set(const T&) { return true; }  // a field always shown
  static bool set(bool v) { return v; }
  static bool set(int64_t v) { return v != 0; }
  static bool set(const std::string& v) { return !v.empty(); }
  template <class T>
  static bool set(const std::vector<T>& v) { return !v.empty(); }
  template <class T>
  static bool set(const std::optional<T>& v) { return v.has_value(); }
  template <class C, class Cs>
  static bool set(const ProcessFields<C, Cs>& p) { return p.shared_samples_by_process.size() > 1; }

  static json value(LearnVariant v) { return to_string(v); }
  static json value(const std::vector<StageRecord>& stages) {
    json out = json::array();
    for (const auto& s : stages) {
      json j = s.details;
      j["stage"] = s.stage;
      if (s.round >= 0) j["round"] = s.round;
      j["samples"] = s.samples;
      j["seconds"] = s.seconds;
      j["summary"] = s.summary;
      out.push_back(j);
    }
    return out;
  }
  static json value(const std::optional<LayerErrors>& e) { return errors_json(*e); }
  static json value(const std::optional<NoiseReport>& n) { return to_json(*n); }
  template <class C, class Cs>
  static json value(const ProcessFields<C, Cs>& p) {
    return {{"count", p.shared_samples_by_process.size()}, {"shared_samples_by_process", p.shared_samples_by_process},
            {"this_process_gathers", p.gathers}, {"this_process_bytes_sent", 8 * p.gathered_doubles_sent},
            {"this_process_bytes_received", 8 * p.gathered_doubles_received}};
  }
  static json value(const std::vector<ReferenceCheck>& v) { return rows_to_json(v); }
  static json value(const std::vector<Diagnostic>& v) { return rows_to_json(v); }
  template <class T>
  static json value(const T& v) { return v; }

  template <class T>
  void operator()(const ReportField& f, const T& v) {
    if (f.shown == Shown::when_set && !set(v)) return;
    out[f.report] = value(v);
  }
};

}  // namespace

json to_json(const LearnReport& r) {
  json out = json::object();
  visit_report_fields(r, ReportWriter{out});
  json choices = json::object();
  for (const auto& [name, value] : variant_choices(r.variant)) choices[name] = value;
  out["variant_choices"] = choices;
  return out;
}

std::string format_table_head(LearnVariant variant) {
  return format("variant: %s\n", to_string(variant)) +
         format("%-7s %5s %11s %8s  %s\n", "stage", "round", "samples", "seconds", "what it did");
}

std::string format_stage_line(const StageRecord& s) {
  return format("%-7s %5s %11lld %8.2f  %s\n", s.stage.c_str(), s.round >= 0 ? std::to_string(s.round).c_str() : "-",
                (long long)s.samples, s.seconds, s.summary.c_str());
}

std::string format_diagnostic(const Diagnostic& d) {
  return "stage " + d.stage + (d.round >= 0 ? ", round " + std::to_string(d.round) : std::string()) +
         (d.warning ? ", past its threshold" : "") + ": " + d.name + ": " + d.detail;
}

std::string format_table_tail(const LearnReport& r) {
  std::ostringstream out;
  out << format("\nsamples: %lld by the paper's stages (incl. %lld-sample validation set), %lld by polishing; %.1f s in all\n",
                (long long)r.samples_paper, (long long)r.validation_samples,
                (long long)r.samples_polish, r.seconds);
  if (r.best_round >= 0) out << format("best round by validation: %d\n", r.best_round);
  if (!r.message.empty()) out << "note: " << r.message << "\n";
  if (r.noise) out << format_noise(*r.noise);
  auto errors = [&](const char* label, const std::optional<LayerErrors>& e) {
    if (!e) return;
    out << format("%-34s max Θ error %.3e   max W error %.3e   test error %.3e\n", label, e->theta_max_rel, e->w_max_rel,
                  e->test_relative_error);
  };
  if (!r.reference.empty()) {
    std::vector<Comparison> rows;
    for (const ReferenceCheck& c : r.reference) rows.push_back(c.comparison);
    out << "\nreference paths (each stage's fast path against its reference on this run's inputs):\n"
        << mha::format_table(rows);
  }
  for (const Diagnostic& d : r.diagnostics) out << "diagnostic (" << format_diagnostic(d) << ")\n";
  errors("errors (exhaustive net only):", r.errors_coarse_net);
  errors("errors (paper's stages):", r.errors_before_polish);
  errors("errors (after polishing):", r.samples_final_fit > 0 ? r.errors_before_final_fit : r.errors);
  if (r.samples_final_fit > 0) errors("errors (after the final fit):", r.errors);
  return out.str();
}

std::string format_table(const LearnReport& r) {
  std::string out = format_table_head(r.variant);
  for (const auto& s : r.stages) out += format_stage_line(s);
  return out + format_table_tail(r);
}

std::vector<std::string> learner_warnings(const LearnReport& r) {
  std::vector<std::string> lines;
  if (r.noise && !r.noise->warning.empty()) lines.push_back(r.noise->warning);
  return lines;
}

}  // namespace mha

#include "learn/report.hpp"

#include "learn/open_choices.hpp"
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

json to_json(const LearnReport& r) {
  json stages = json::array();
  for (const auto& s : r.stages) {
    json j = s.details;
    j["stage"] = s.stage;
    if (s.round >= 0) j["round"] = s.round;
    j["samples"] = s.samples;
    j["seconds"] = s.seconds;
    j["summary"] = s.summary;
    stages.push_back(j);
  }
  json choices = json::object();
  for (const auto& [name, value] : variant_choices(r.variant)) choices[name] = value;
  json out = {{"variant", to_string(r.variant)}, {"variant_choices", choices}, {"stages", stages}, {"round_validation_error", r.round_validation_error}, {"best_round", r.best_round},
              {"samples_paper_stages", r.samples_paper}, {"samples_polish", r.samples_polish},
              {"samples_total", r.samples_total}, {"validation_samples", r.validation_samples}, {"seconds", r.seconds}, {"ok", r.ok}, {"message", r.message}};
  if (r.noise) out["noise"] = to_json(*r.noise);
  if (r.samples_final_fit > 0) out["samples_final_fit"] = r.samples_final_fit;
  if (r.errors_before_final_fit) out["errors_before_final_fit"] = errors_json(*r.errors_before_final_fit);
  if (r.errors_coarse_net) out["errors_coarse_net"] = errors_json(*r.errors_coarse_net);
  if (r.errors_before_polish) out["errors_before_polish"] = errors_json(*r.errors_before_polish);
  if (r.errors) out["errors"] = errors_json(*r.errors);
  // Only when they apply: an uninterrupted run's report keeps its earlier keys.
  if (r.interrupted) {
    out["interrupted"] = true;
    out["safe_point"] = r.safe_point;
  }
  if (!r.resumed_at.empty()) out["resumed_at"] = r.resumed_at;
  // Only for a run shared by processes (MPI ranks): one process's report keeps its keys.
  if (r.shared_samples_by_process.size() > 1)
    out["processes"] = {{"count", r.shared_samples_by_process.size()},
                        {"shared_samples_by_process", r.shared_samples_by_process},
                        {"this_process_gathers", r.gathers},
                        {"this_process_bytes_sent", 8 * r.gathered_doubles_sent},
                        {"this_process_bytes_received", 8 * r.gathered_doubles_received}};
  // Only when the reference step ran: a run without it keeps the keys it always had.
  if (!r.reference.empty()) {
    json rows = json::array();
    for (const ReferenceCheck& c : r.reference) rows.push_back(to_json(c));
    out["reference"] = rows;
  }
  if (!r.diagnostics.empty()) {
    json diagnostics = json::array();
    for (const Diagnostic& d : r.diagnostics) diagnostics.push_back(to_json(d));
    out["diagnostics"] = diagnostics;
  }
  return out;
}

std::string format_table(const LearnReport& r) {
  std::ostringstream out;
  out << format("variant: %s\n", to_string(r.variant));
  out << format("%-7s %5s %11s %8s  %s\n", "stage", "round", "samples", "seconds", "what it did");
  for (const auto& s : r.stages)
    out << format("%-7s %5s %11lld %8.2f  %s\n", s.stage.c_str(), s.round >= 0 ? std::to_string(s.round).c_str() : "-",
                  (long long)s.samples, s.seconds, s.summary.c_str());
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
  for (const Diagnostic& d : r.diagnostics)
    out << (d.warning ? "warning" : "diagnostic") << " (stage " << d.stage << (d.round >= 0 ? ", round " + std::to_string(d.round) : std::string()) << "): "
        << d.name << ": " << d.detail << "\n";
  errors("errors (exhaustive net only):", r.errors_coarse_net);
  errors("errors (paper's stages):", r.errors_before_polish);
  errors("errors (after polishing):", r.samples_final_fit > 0 ? r.errors_before_final_fit : r.errors);
  if (r.samples_final_fit > 0) errors("errors (after the final fit):", r.errors);
  return out.str();
}

}  // namespace mha

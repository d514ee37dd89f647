// The command-line contract: bad input gets one line on stderr naming the
// problem and exit status 2, never a crash or a partial output file.
#include "test_tolerances.hpp"
#include "cli_sandbox.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "data/oracle.hpp"
#include "model/forward_error.hpp"
#include "numeric/precision.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {
// A float32 .npy file (as PyTorch's tensors save by default) holding `values`
// rounded to float: numpy's layout for '<f8' with the descr and data swapped.
std::string npy_float32_bytes(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  std::string bytes = mha::npy_bytes_float64(shape, values.data());
  bytes.resize(bytes.size() - values.size() * sizeof(double));
  bytes.replace(bytes.find("<f8"), 3, "<f4");
  for (const double v : values) {
    const float f = static_cast<float>(v);
    bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
  }
  return bytes;
}
}  // namespace

using mha::test::expect_bad_input;
using mha::test::Run;
using mha::test::Sandbox;
using mha::test::slurp;

TEST_CASE("generate, check, sample and forward work together", "[cli]") {
  Sandbox s;
  Run g = s.run("generate --d 8 --k 2 --m 2 --seed 3 -o " + s.path("inst.json"));
  REQUIRE(g.status == 0);
  CHECK_THAT(g.out, Catch::Contains("conditions:"));
  Run c = s.run("check " + s.path("inst.json"));
  REQUIRE(c.status == 0);
  CHECK_THAT(c.out, Catch::Contains("theta_incoherence"));
  CHECK_THAT(c.out, Catch::Contains("theta_non_arithmetic"));
  Run cj = s.run("check --json " + s.path("inst.json"));
  REQUIRE(cj.status == 0);
  CHECK(nlohmann::json::parse(cj.out)["conditions"]["checks"].size() == 13);
  REQUIRE(s.run("sample " + s.path("inst.json") + " --n 50 --threads 2 --x " + s.path("X.npy") + " --y " + s.path("Y.npy")).status == 0);
  REQUIRE(s.run("sample " + s.path("inst.json") + " --n 50 --threads 1 --x " + s.path("X1.npy") + " --y " + s.path("Y1.npy")).status == 0);
  CHECK(slurp(s.path("Y.npy")) == slurp(s.path("Y1.npy")));
  REQUIRE(s.run("forward " + s.path("inst.json") + " --x " + s.path("X.npy") + " -o " + s.path("F.npy")).status == 0);
  CHECK(slurp(s.path("F.npy")) == slurp(s.path("Y.npy")));
  REQUIRE(s.run("forward " + s.path("inst.json") + " --x " + s.path("X.npy") + " --path reference -o " + s.path("R.npy")).status == 0);
  const auto fast = mha::read_npy(s.path("F.npy")), ref = mha::read_npy(s.path("R.npy"));
  REQUIRE(fast.ok);
  REQUIRE(ref.ok);
  // Each sample within the fast path's a priori bound plus the reference's rounding to
  // double and its own 200-bit error (as property_tests/fast_vs_reference_forward.cpp).
  const auto xs = mha::read_npy(s.path("X.npy"));
  const auto inst = mha::read_instance(s.path("inst.json"));
  REQUIRE(xs.ok);
  REQUIRE(inst.ok);
  const mha::Layer& layer = inst.instance.layer;
  const int64_t k = 2, d = 8;
  REQUIRE(fast.array.f64.size() == size_t(50 * k * d));
  REQUIRE(xs.array.i8.size() == fast.array.f64.size());  // ±1 tokens are stored as int8
  for (int64_t i = 0; i < 50; ++i) {
    mha::MatD x(k, d);
    for (int64_t j = 0; j < k * d; ++j) x.data()[j] = xs.array.i8[i * k * d + j];
    const mha::MatD f = Eigen::Map<const mha::MatD>(fast.array.f64.data() + i * k * d, k, d);
    const mha::MatD r = Eigen::Map<const mha::MatD>(ref.array.f64.data() + i * k * d, k, d);
    double z_scale = 0;
    for (const auto& h : layer.heads) z_scale += (x * h.w).cwiseAbs().maxCoeff();
    const mha::MatD bound = mha::forward_error_bound(layer, x) + r.cwiseAbs() * mha::tolerance::kDoubleUnitRoundoff +
                            mha::MatD::Constant(k, d, mha::tolerance::reference_relative_error(mha::kDefaultPrecisionBits, int64_t{1} << 40) * z_scale);
    CHECK(((f - r).cwiseAbs() - bound).maxCoeff() <= 0.0);
  }
  CHECK(fs::exists(s.path("Y.npy.json")));
}

TEST_CASE("import reads standard attention weights", "[cli][import]") {
  Sandbox s;
  const int d = 8;
  std::vector<double> w(d * d);
  for (const char* name : {"wq", "wk", "wv", "wo"}) {
    for (int i = 0; i < d * d; ++i) w[i] = std::sin(1.0 + i * (name[1] + 3.0));
    mha::write_npy_float64(s.path(std::string(name) + ".npy"), {d, d}, w.data());
  }
  const std::string args = "import --wq " + s.path("wq.npy") + " --wk " + s.path("wk.npy") + " --wv " + s.path("wv.npy") +
                           " --wo " + s.path("wo.npy");
  Run ok = s.run(args + " --heads 2 -o " + s.path("imp.json"));
  REQUIRE(ok.status == 0);
  CHECK_THAT(ok.out, Catch::Contains("m=2"));
  REQUIRE(s.run("check " + s.path("imp.json")).status == 0);
  expect_bad_input(s.run(args + " --heads 3 -o " + s.path("bad.json")), "divisible");
  CHECK_FALSE(fs::exists(s.path("bad.json")));
}

TEST_CASE("bad input: one line, exit status 2, no output file", "[cli][bad-input]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 8 --k 2 --m 2 -o " + s.path("inst.json")).status == 0);
  const std::string inst = s.path("inst.json");
  const std::string good = slurp(inst);

  SECTION("usage") {
    expect_bad_input(s.run("generate --m 0 -o " + s.path("o.json")), "--m");
    expect_bad_input(s.run("generate --d 4 --k 5 -o " + s.path("o.json")), "exceeds d");
    expect_bad_input(s.run("generate --scale nan -o " + s.path("o.json")), "scale");
    expect_bad_input(s.run("frobnicate"), "error");
    expect_bad_input(s.run("forward " + inst + " --x x.npy --precision 10 -o " + s.path("o.npy")), "--precision");
    expect_bad_input(s.run("forward " + inst + " --x x.npy --precision 100000000 -o " + s.path("o.npy")), "--precision");
    expect_bad_input(s.run("sample " + inst + " --n 0 --x a.npy --y b.npy"), "--n");
    // 1e12 samples at (8, 2) are 144 TB: refused before anything is written.
    expect_bad_input(s.run("sample " + inst + " --n 1000000000000 --x " + s.path("a.npy") + " --y " + s.path("b.npy")),
                     "free on its file system");
    CHECK_FALSE(fs::exists(s.path("o.json")));
    CHECK_FALSE(fs::exists(s.path("a.npy")));
  }
  SECTION("learn") {
    REQUIRE(s.run("sample " + inst + " --n 50 --x " + s.path("x.npy") + " --y " + s.path("y.npy")).status == 0);
    expect_bad_input(s.run("learn -o " + s.path("o.json")), "give either an instance file");
    expect_bad_input(s.run("learn " + inst + " --m 3 -o " + s.path("o.json")), "--m differs");
    expect_bad_input(s.run("learn --x " + s.path("x.npy") + " --y " + s.path("y.npy") + " -o " + s.path("o.json")), "--m");
    expect_bad_input(s.run("learn " + inst + " --rounds 0 -o " + s.path("o.json")), "--rounds");
    expect_bad_input(s.run("learn " + inst + " --stage1-samples -5 -o " + s.path("o.json")), "--stage1-samples");
    CHECK_FALSE(fs::exists(s.path("o.json")));
  }
  SECTION("instance files") {
    s.write("trunc.json", good.substr(0, good.size() / 3));
    expect_bad_input(s.run("check " + s.path("trunc.json")), "malformed or truncated");
    s.write("garbage.json", "\x01\x02not json");
    expect_bad_input(s.run("check " + s.path("garbage.json")), "malformed");
    expect_bad_input(s.run("check " + s.path("missing.json")), "cannot open");
    std::string m0 = good;
    m0.replace(m0.find("\"m\": 2"), 6, "\"m\": 0");
    s.write("m0.json", m0);
    expect_bad_input(s.run("check " + s.path("m0.json")), "\"m\"");
    std::string kd = good;
    kd.replace(kd.find("\"k\": 2"), 6, "\"k\": 9");
    s.write("kd.json", kd);
    expect_bad_input(s.run("sample " + s.path("kd.json") + " --n 5 --x " + s.path("a.npy") + " --y " + s.path("b.npy")), "exceeds d");
    CHECK_FALSE(fs::exists(s.path("a.npy")));
  }
  SECTION("npy inputs") {
    const std::vector<int8_t> ok(2 * 2 * 8, 1);
    std::vector<int8_t> zero = ok;
    zero[5] = 0;
    mha::write_npy_int8(s.path("zero.npy"), {2, 2, 8}, zero.data());
    expect_bad_input(s.run("forward " + inst + " --x " + s.path("zero.npy") + " -o " + s.path("o.npy")), "±1");
    mha::write_npy_int8(s.path("shape.npy"), {2, 16}, ok.data());
    expect_bad_input(s.run("forward " + inst + " --x " + s.path("shape.npy") + " -o " + s.path("o.npy")), "3-D");
    mha::write_npy_int8(s.path("dim.npy"), {4, 2, 4}, ok.data());
    expect_bad_input(s.run("forward " + inst + " --x " + s.path("dim.npy") + " -o " + s.path("o.npy")), "d = 8");
    std::vector<double> nan(2 * 2 * 8, 0.5);
    nan[3] = std::nan("");
    mha::write_npy_float64(s.path("nan.npy"), {2, 2, 8}, nan.data());
    expect_bad_input(s.run("forward " + inst + " --x " + s.path("nan.npy") + " -o " + s.path("o.npy")), "non-finite");
    mha::write_npy_int8(s.path("good.npy"), {2, 2, 8}, ok.data());
    const std::string bytes = slurp(s.path("good.npy"));
    s.write("trunc.npy", bytes.substr(0, bytes.size() - 7));
    expect_bad_input(s.run("forward " + inst + " --x " + s.path("trunc.npy") + " -o " + s.path("o.npy")), "trunc.npy");
    std::string f2 = bytes;
    f2.replace(f2.find("|i1"), 3, "<f2");
    s.write("f2.npy", f2);
    expect_bad_input(s.run("forward " + inst + " --x " + s.path("f2.npy") + " -o " + s.path("o.npy")), "f2");
    CHECK_FALSE(fs::exists(s.path("o.npy")));
  }
}

TEST_CASE("learn runs end to end and writes the learned layer and the report", "[cli][learn]") {
  Sandbox s;
  // One head: the hull is a point, so the run is short even under the sanitizers.
  REQUIRE(s.run("generate --d 10 --k 2 --m 1 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const Run r = s.run("learn " + s.path("inst.json") + " --threads 2 --stage1-samples 50000 --sculpt-samples 300000 "
                      "--final-sculpt-samples 300000 --margin-samples 300000 --rounds 2 --no-reference --test-samples 1000 --report " + s.path("r.json") +
                      " -o " + s.path("learned.json"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("errors (after polishing)") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(s.path("r.json")));
  CHECK(report["ok"] == true);
  CHECK(report["stages"].size() >= 4);
  CHECK(report["errors"]["theta_max_rel"].get<double>() < mha::tolerance::cli_learn_polished_target());
  CHECK(report.contains("errors_before_polish"));
  CHECK(report["provenance"]["command"] == "learn");
  // What the run cost the machine (docs/formats.md, "Provenance"): CPU time and the load.
  CHECK(report["provenance"]["resources"]["cpu_seconds"].get<double>() > 0);
  CHECK(report["provenance"]["resources"].contains("load_average_end"));
  REQUIRE(s.run("check " + s.path("learned.json")).status <= 1);  // a readable instance (its conditions may fail)
}

TEST_CASE("learn --margin-events sets how many events each stage-3 round collects", "[cli][learn]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 10 --k 2 --m 1 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const std::string base = "learn " + s.path("inst.json") + " --threads 2 --stage1-samples 50000 --sculpt-samples 300000 "
                           "--final-sculpt-samples -1 --rounds 2 --no-polish --no-reference --test-samples 1000 --report ";
  const auto stage3_events = [&](const std::string& extra, const std::string& name) {
    const Run r = s.run(base + s.path(name) + extra);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.status == 0);
    const auto report = nlohmann::json::parse(slurp(s.path(name)));
    for (const auto& st : report["stages"])
      if (st["stage"] == "3") return std::make_pair(report, st["events"].get<int64_t>());
    FAIL("no stage-3 entry in the report");
    return std::make_pair(report, int64_t{0});
  };
  const auto [plain, events_default] = stage3_events("", "default.json");
  const auto [more, events_more] = stage3_events(" --margin-events 4000", "more.json");
  CHECK(events_default >= 16 * 10);  // the default target, 16·d
  CHECK(events_default < 4000);
  CHECK(events_more >= 4000);
  CHECK_FALSE(plain["provenance"]["options"].contains("margin_events"));  // reports made before the option read the same
  CHECK(more["provenance"]["options"]["margin_events"] == 4000);
}

TEST_CASE("learn --final-rounds: stage 3 on the final round's heads, then a final round with twice the samples",
          "[cli][learn]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 10 --k 2 --m 2 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const Run r = s.run("learn " + s.path("inst.json") + " --threads 2 --stage1-samples 50000 --sculpt-samples 300000 "
                      "--final-sculpt-samples 300000 --final-rounds 2 --rounds 2 --no-polish --no-reference "
                      "--test-samples 1000 --report " + s.path("r.json"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  const auto report = nlohmann::json::parse(slurp(s.path("r.json")));
  CHECK(report["provenance"]["options"]["final_rounds"] == 2);
  // Rounds 0 and 1, then the final rounds 2 and 3 with stage 3 between them.
  std::vector<std::string> order;
  int64_t final_samples[2] = {0, 0};
  for (const auto& st : report["stages"]) {
    const int round = st.value("round", -1);
    if (round < 2) continue;
    order.push_back(st["stage"].get<std::string>() + "@" + std::to_string(round));
    if (st["stage"] == "4") final_samples[round - 2] = st["samples"].get<int64_t>();
    if (st["stage"] == "3" && round == 2) CHECK(st["proxy"] == "the net's heads");
  }
  REQUIRE(order.size() >= 7);
  CHECK(std::vector<std::string>(order.begin(), order.begin() + 7) ==
        std::vector<std::string>{"4@2", "5@2", "6@2", "3@2", "4@3", "5@3", "6@3"});
  CHECK(final_samples[0] == 300000);
  CHECK(final_samples[1] == 600000);

  expect_bad_input(s.run("learn " + s.path("inst.json") + " --final-rounds 2 --variant paper"),
                   "--final-rounds: final rounds belong to the extended variant");
  expect_bad_input(s.run("learn " + s.path("inst.json") + " --final-rounds 2 --final-sculpt-samples -1"),
                   "--final-rounds: final rounds belong to the extended variant");
}

// The final rounds of a report: {stage-4 rounds' samples}, and the automatic rule's diagnostics' details.
struct FinalRounds {
  std::vector<int64_t> samples;
  std::vector<std::string> decisions;
};

FinalRounds final_rounds_of(const nlohmann::json& report, int first_final_round) {
  FinalRounds f;
  for (const auto& st : report["stages"])
    if (st["stage"] == "4" && st.value("round", -1) >= first_final_round) f.samples.push_back(st["samples"].get<int64_t>());
  for (const auto& d : report.value("diagnostics", nlohmann::json::array()))
    if (d["name"] == "automatic final rounds") f.decisions.push_back(d["detail"].get<std::string>());
  return f;
}

TEST_CASE("learn's automatic final rounds: a second when the first validates above the bar, none when it does not",
          "[cli][learn]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 10 --k 2 --m 2 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const std::string base = "learn " + s.path("inst.json") + " --threads 2 --stage1-samples 50000 --sculpt-samples 300000 "
                           "--final-sculpt-samples 300000 --rounds 2 --no-polish --no-reference --test-samples 1000 ";
  // The default (--final-rounds 0): this small budget's final round validates above 0.36e-6.
  REQUIRE(s.run(base + "--report " + s.path("auto.json")).status == 0);
  const auto automatic = nlohmann::json::parse(slurp(s.path("auto.json")));
  CHECK_FALSE(automatic["provenance"]["options"].contains("final_rounds"));  // the default is not recorded
  const FinalRounds a = final_rounds_of(automatic, 2);
  REQUIRE(a.decisions.size() == 1);
  INFO(a.decisions[0]);
  CHECK(a.decisions[0].find("above") != std::string::npos);
  CHECK(a.samples == std::vector<int64_t>{300000, 600000});
  // The tester: --final-rounds 1 makes one final round and no decision.
  REQUIRE(s.run(base + "--final-rounds 1 --report " + s.path("one.json")).status == 0);
  const FinalRounds one = final_rounds_of(nlohmann::json::parse(slurp(s.path("one.json"))), 2);
  CHECK(one.samples == std::vector<int64_t>{300000});
  CHECK(one.decisions.empty());
}

TEST_CASE("learn --oracle replaces the named stages by the truth and says so in the report", "[cli][learn][oracle]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 10 --k 2 --m 2 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const Run r = s.run("learn " + s.path("inst.json") + " --oracle hull,stage1 --threads 2 --no-polish --test-samples 1000 "
                      "--net-tuples 2000 --report " + s.path("r.json"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("stages replaced by the truth: stage1, hull") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(s.path("r.json")));
  CHECK(report["provenance"]["options"]["oracle"] == nlohmann::json::array({"stage1", "hull"}));
  CHECK(report["stages"][0]["stage"] == "1");
  CHECK(report["stages"][0]["oracle"] == true);
  CHECK(report["stages"][1]["oracle"] == true);  // stage 2: the true hull

  // Bad oracle lists, and oracles without the truth, are bad input.
  expect_bad_input(s.run("learn " + s.path("inst.json") + " --oracle stage7"), "unknown oracle stage 'stage7'");
  REQUIRE(s.run("sample " + s.path("inst.json") + " --n 100 --x " + s.path("x.npy") + " --y " + s.path("y.npy")).status == 0);
  expect_bad_input(s.run("learn --x " + s.path("x.npy") + " --y " + s.path("y.npy") + " --m 2 --oracle stage1"),
                   "--oracle needs the true instance");
}

TEST_CASE("learn on noisy labels: the noise report, the final fit and the noise options", "[cli][learn][noise]") {
  // Every stage but polishing from the truth: what is tested is the noise handling's plumbing.
  Sandbox s;
  REQUIRE(s.run("generate --d 8 --k 2 --m 2 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const std::string learn = "learn " + s.path("inst.json") + " --oracle stage1,hull,stage6 --threads 2 --test-samples 1000 ";
  const Run r = s.run(learn + "--label-noise 1e-4 --final-fit-samples 2048 --report " + s.path("r.json"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("label noise: ") && Catch::Contains("limited by: label noise"));
  const auto report = nlohmann::json::parse(slurp(s.path("r.json")));
  CHECK(report["noise"]["estimated"] == true);
  CHECK(report["noise"]["declared"] == 1e-4);  // --assume-label-noise defaults to --label-noise
  CHECK(report["noise"]["final_fit"]["samples"] == 2048);
  CHECK(report["provenance"]["options"]["final_fit_samples"] == 2048);
  bool fit = false;
  for (const auto& st : report["stages"]) fit = fit || st["stage"] == "fit";
  CHECK(fit);
  CHECK_FALSE(report["noise"].contains("warning"));
  // Certification told the labels are noiseless: the report warns.
  const Run quiet = s.run(learn + "--label-noise 1e-4 --assume-label-noise 0 --final-fit-samples 0 --report " + s.path("q.json"));
  REQUIRE(quiet.status == 0);
  const auto q = nlohmann::json::parse(slurp(s.path("q.json")));
  CHECK_THAT(q["noise"]["warning"].get<std::string>(), Catch::Contains("--assume-label-noise"));
  CHECK(q["noise"]["final_fit"]["samples"] == 0);
  CHECK_THAT(quiet.out, Catch::Contains("warning: "));
  expect_bad_input(s.run(learn + "--assume-label-noise -1"), "--assume-label-noise");
  expect_bad_input(s.run(learn + "--final-fit-samples -5"), "--final-fit-samples");
}

TEST_CASE("sculpt with its defaults (the learner's: adaptive τ) certifies rows on a generated instance", "[cli][sculpt]") {
  // Exactly the standalone use docs/cli.md shows; with the old fixed τ = 1e-3 it failed
  // with "no row was certified".
  Sandbox s;
  REQUIRE(s.run("generate --d 16 --k 2 --m 2 --scale 3 --seed 21 -o " + s.path("i.json")).status == 0);
  // --quiet: stderr must hold no warning; progress lines (past 10 s, as under the
  // sanitizers) are not what is checked.
  const Run r = s.run("sculpt " + s.path("i.json") + " --m 2 --quiet");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("adaptive τ"));
  CHECK_THAT(r.out, Catch::Contains("assumed σ_min(C) = 1e+03"));  // the learner's round 0
  const size_t at = r.out.find(" constraints, ");
  REQUIRE(at != std::string::npos);
  const size_t begin = r.out.rfind(", ", at) + 2;
  CHECK(std::stoll(r.out.substr(begin, at - begin)) > 0);
  // A fixed --tau is still honoured and reported as such.
  s.run("sculpt " + s.path("i.json") + " --m 2 --tau 1e-3 --max-samples 20000 --report " + s.path("fixed.json"));
  const nlohmann::json stage2 = nlohmann::json::parse(slurp(s.path("fixed.json")))["stages"].back();
  CHECK(stage2["tau_rule"] == "fixed");
  CHECK(stage2["tau"] == 1e-3);
  CHECK(stage2["samples"] == 20000);
}

TEST_CASE("learn --method adam trains the baseline and reports like the paper's learner", "[cli][learn][adam]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 8 --k 2 --m 2 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  const Run r = s.run("learn " + s.path("inst.json") + " --method adam --max-samples 100000 --batch 128 --threads 2 "
                      "--test-samples 1000 --report " + s.path("r.json") + " -o " + s.path("learned.json"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("errors (Adam, best checkpoint)") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(s.path("r.json")));
  CHECK(report["method"] == "adam");
  CHECK(report["ok"] == true);
  CHECK(report["stages"][0]["stage"] == "adam");
  CHECK(report["errors"]["theta_max_rel"].get<double>() < mha::tolerance::cli_stages_only_target());  // measured 0.19 (Θ), 0.11 (W)
  CHECK(report["trajectory"].size() > 10);
  CHECK(report["provenance"]["options"]["batch"] == 128);
  REQUIRE(s.run("check " + s.path("learned.json")).status <= 1);
  expect_bad_input(s.run("learn " + s.path("inst.json") + " --method adam --max-samples 0"), "--max-seconds");
  expect_bad_input(s.run("learn " + s.path("inst.json") + " --method sgd"), "method");
}

TEST_CASE("check rejects an instance nested 65,000 levels deep with one line", "[cli][bad-input][fuzz]") {
  // Regression: check, forward, sample and stage1 crashed (stack overflow).
  Sandbox s;
  REQUIRE(s.run("generate --d 4 --k 2 --m 1 -o " + s.path("inst.json")).status == 0);
  std::string text = slurp(s.path("inst.json"));
  text.resize(text.rfind('}'));
  for (const std::string key : {"provenance", "extensions"}) {
    const std::string file = key + ".json";
    s.write(file, text + ",\"" + key + "\": " + std::string(65000, '[') + std::string(65000, ']') + "}");
    expect_bad_input(s.run("check " + s.path(file)), "nested deeper than 64 levels");
    expect_bad_input(s.run("forward " + s.path(file) + " --x x.npy -o " + s.path("o.npy")), "nested deeper");
    expect_bad_input(s.run("stage1 " + s.path(file)), "nested deeper");
  }
  CHECK_FALSE(fs::exists(s.path("o.npy")));
}

TEST_CASE("forward fails with exit 3 where the fast path overflows, and --path reference answers", "[cli][overflow]") {
  // Regression: entries of 1e154 gave all-NaN outputs with exit 0 on the fast path.
  Sandbox s;
  REQUIRE(s.run("generate --d 4 --k 2 --m 1 --inputs gaussian --seed 1 -o " + s.path("inst.json")).status == 0);
  std::vector<double> x(3 * 2 * 4);
  // Entries of about 1e156: the logits, about 1e312, overflow double.
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0 ? -1e156 : 1e156) * (1.0 + 0.125 * double(i % 5));
  REQUIRE(mha::write_npy_float64(s.path("x.npy"), {3, 2, 4}, x.data()).empty());
  const Run fast = s.run("forward " + s.path("inst.json") + " --x " + s.path("x.npy") + " -o " + s.path("F.npy"));
  INFO("stderr: " << fast.err);
  CHECK(fast.status == 3);
  CHECK_THAT(fast.err, Catch::Contains("sample 0") && Catch::Contains("--path reference"));
  CHECK(std::count(fast.err.begin(), fast.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(s.path("F.npy")));
  const Run ref = s.run("forward " + s.path("inst.json") + " --x " + s.path("x.npy") + " --path reference -o " + s.path("R.npy"));
  REQUIRE(ref.status == 0);
  const auto r = mha::read_npy(s.path("R.npy"));
  REQUIRE(r.ok);
  for (const double v : r.array.f64) CHECK(std::isfinite(v));
}

TEST_CASE("sample and learn refuse an instance whose oracle could overflow the fast path", "[cli][overflow]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 4 --k 2 --m 1 -o " + s.path("inst.json")).status == 0);
  std::string text = slurp(s.path("inst.json"));
  // Scale the first Θ entry to 1e307: Σ|Θ| exceeds the a priori bound.
  const size_t at = text.find("\"theta\"");
  REQUIRE(at != std::string::npos);
  const size_t num = text.find_first_of("-0123456789", at);  // the file is pretty-printed: "[\n  [\n    x,"
  const size_t end = text.find_first_of(",] \n", num);
  text.replace(num, end - num, "1e307");
  s.write("big.json", text);
  REQUIRE(s.run("check " + s.path("big.json")).status <= 1);  // a valid instance
  for (const std::string& cmd : {"sample " + s.path("big.json") + " --n 5 --x " + s.path("a.npy") + " --y " + s.path("b.npy"),
                                "learn " + s.path("big.json") + " -o " + s.path("o.json")}) {
    const Run r = s.run(cmd);
    INFO(cmd << "\nstderr: " << r.err);
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Catch::Contains("overflow double"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(s.path("a.npy")));
}

TEST_CASE("float32 files: labels for learn, inputs for forward, weights for import", "[cli][float32]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 8 --k 2 --m 2 --scale 3 --seed 2 -o " + s.path("inst.json")).status == 0);
  REQUIRE(s.run("sample " + s.path("inst.json") + " --n 3000 --threads 2 --x " + s.path("X.npy") + " --y " + s.path("Y.npy")).status == 0);
  const auto y = mha::read_npy(s.path("Y.npy"));
  REQUIRE(y.ok);
  s.write("Y32.npy", npy_float32_bytes(y.array.shape, y.array.f64));
  const Run r = s.run("learn --x " + s.path("X.npy") + " --y " + s.path("Y32.npy") + " --m 2 --method adam --max-samples 20000 "
                      "--batch 128 --threads 2 --report " + s.path("r.json") + " -o " + s.path("learned.json"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(slurp(s.path("r.json")))["ok"] == true);
  REQUIRE(s.run("check " + s.path("learned.json")).status <= 1);
  // The paper's learner reads the same labels; 3000 samples are too few for it,
  // so it stops with its own message (exit 1), not a dtype error.
  const Run paper = s.run("learn --x " + s.path("X.npy") + " --y " + s.path("Y32.npy") + " --m 2 --threads 2");
  INFO("stderr: " << paper.err);
  CHECK(paper.status == 1);
  CHECK_THAT(paper.out, Catch::Contains("the dataset ran out"));

  // Gaussian inputs as float32: forward reads them like the float64 values they widen to.
  REQUIRE(s.run("generate --d 4 --k 2 --m 1 --inputs gaussian --seed 3 -o " + s.path("g.json")).status == 0);
  std::vector<double> x(2 * 2 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(1.0 + double(i)));
  s.write("x32.npy", npy_float32_bytes({2, 2, 4}, x));
  REQUIRE(mha::write_npy_float64(s.path("x64.npy"), {2, 2, 4}, x.data()).empty());
  REQUIRE(s.run("forward " + s.path("g.json") + " --x " + s.path("x32.npy") + " -o " + s.path("F32.npy")).status == 0);
  REQUIRE(s.run("forward " + s.path("g.json") + " --x " + s.path("x64.npy") + " -o " + s.path("F64.npy")).status == 0);
  CHECK(slurp(s.path("F32.npy")) == slurp(s.path("F64.npy")));

  // PyTorch's weights are float32 too.
  std::vector<double> w(4 * 4);
  for (const char* name : {"wq", "wk", "wv", "wo"}) {
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(2.0 + double(i) * (name[1] - 100.0));
    s.write(std::string(name) + ".npy", npy_float32_bytes({4, 4}, w));
  }
  const Run imp = s.run("import --wq " + s.path("wq.npy") + " --wk " + s.path("wk.npy") + " --wv " + s.path("wv.npy") +
                        " --wo " + s.path("wo.npy") + " --heads 2 -o " + s.path("imp.json"));
  INFO("stderr: " << imp.err);
  REQUIRE(imp.status == 0);
  REQUIRE(s.run("check " + s.path("imp.json")).status <= 1);
}

TEST_CASE("verify compares stages fast against reference and says so in its exit status", "[cli][verify]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 6 --k 2 --m 2 --seed 3 -o " + s.path("inst.json")).status == 0);
  Run v = s.run("verify forward 6 --instance " + s.path("inst.json") + " --report " + s.path("v.json"));
  INFO(v.out << v.err);
  REQUIRE(v.status == 0);
  CHECK_THAT(v.out, Catch::Contains("forward") && Catch::Contains("agree") && Catch::Contains("MPFR 128"));
  const auto report = nlohmann::json::parse(slurp(s.path("v.json")));
  REQUIRE(report["rows"].size() == 2);
  CHECK(report["rows"][1]["stage"] == "6");
  CHECK(report["rows"][1]["verdict"] == "agree");
  CHECK(report["rows"][1]["slack"].get<double>() <= 1.0);
  expect_bad_input(s.run("verify seven --instance " + s.path("inst.json")), "unknown stage 'seven'");
  expect_bad_input(s.run("verify all --instance " + s.path("missing.json")), "missing.json");
}

namespace {
// Files of the sandbox whose name holds ".tmp." (an atomic writer's temporary file).
int temporary_files(const Sandbox& s) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(s.path("out.txt")).parent_path()))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) ++n;
  return n;
}
}  // namespace

TEST_CASE("datasets are read and written in blocks: the bytes of the whole arrays, bad values found when drawn",
          "[cli][blocks]") {
  Sandbox s;
  REQUIRE(s.run("generate --d 8 --k 2 --m 2 --scale 3 --seed 4 -o " + s.path("inst.json")).status == 0);
  const auto inst = mha::read_instance(s.path("inst.json"));
  REQUIRE(inst.ok);
  const int64_t k = 2, d = 8;

  SECTION("sample and forward over several 16 MiB blocks (131072 samples each at (8, 2))") {
    const int64_t n = 300000;
    REQUIRE(s.run("sample " + s.path("inst.json") + " --n " + std::to_string(n) + " --seed 9 --threads 2 --x " +
                  s.path("X.npy") + " --y " + s.path("Y.npy")).status == 0);
    // The same samples drawn at once, written whole.
    const mha::SampleOracle oracle(inst.instance, 9);
    const mha::LabelledBatch all = oracle.draw(0, n, 2);
    std::vector<int8_t> x(static_cast<size_t>(n * k * d));
    for (int64_t i = 0; i < n; ++i) {
      const mha::MatD xi = all.x.sample(i);
      for (int64_t j = 0; j < k * d; ++j) x[i * k * d + j] = static_cast<int8_t>(xi.data()[j]);  // row-major
    }
    CHECK(slurp(s.path("X.npy")) == mha::npy_bytes_int8({n, k, d}, x.data()));
    CHECK(slurp(s.path("Y.npy")) == mha::npy_bytes_float64({n, k, d}, all.y.data()));
    REQUIRE(s.run("forward " + s.path("inst.json") + " --x " + s.path("X.npy") + " --threads 2 -o " + s.path("F.npy")).status == 0);
    CHECK(slurp(s.path("F.npy")) == slurp(s.path("Y.npy")));

    // A bad input in the third block: exit 2, one line, no output and no temporary file.
    x[(270000 * k + 1) * d + 5] = 0;
    REQUIRE(mha::write_npy_int8(s.path("Xbad.npy"), {n, k, d}, x.data()).empty());
    expect_bad_input(s.run("forward " + s.path("inst.json") + " --x " + s.path("Xbad.npy") + " -o " + s.path("Fbad.npy")),
                     "Xbad.npy: int8 inputs must be ±1, found 0 at flat index " + std::to_string((270000 * k + 1) * d + 5));
    CHECK_FALSE(fs::exists(s.path("Fbad.npy")));
    CHECK(temporary_files(s) == 0);
  }

  SECTION("stage commands read the files as they would draw from the oracle; a bad label stops them when drawn") {
    const int64_t n = 3000;
    REQUIRE(s.run("sample " + s.path("inst.json") + " --n 3000 --seed 5 --x " + s.path("X.npy") + " --y " + s.path("Y.npy")).status == 0);
    REQUIRE(s.run("stage1 " + s.path("inst.json") + " --seed 5 --samples 3000 -o " + s.path("w_oracle.json")).status == 0);
    REQUIRE(s.run("stage1 --x " + s.path("X.npy") + " --y " + s.path("Y.npy") + " --samples 3000 -o " + s.path("w_files.json")).status == 0);
    const auto oracle = nlohmann::json::parse(slurp(s.path("w_oracle.json")));
    const auto files = nlohmann::json::parse(slurp(s.path("w_files.json")));
    CHECK(oracle["matrix"] == files["matrix"]);
    CHECK(oracle["standard_error"] == files["standard_error"]);

    auto y = mha::read_npy(s.path("Y.npy"));
    REQUIRE(y.ok);
    y.array.f64[(2000 * k + 1) * d + 3] = std::nan("");
    REQUIRE(mha::write_npy_float64(s.path("Ynan.npy"), {n, k, d}, y.array.f64.data()).empty());
    const std::string data = " --x " + s.path("X.npy") + " --y " + s.path("Ynan.npy");
    // Samples a run does not draw are not read: the first 1000 are fine.
    CHECK(s.run("stage1" + data + " --samples 1000 -o " + s.path("w1000.json")).status == 0);
    expect_bad_input(s.run("stage1" + data + " --samples 3000 --report " + s.path("r.json") + " -o " + s.path("w.json")),
                     "mhalearn stage1: error: Y entry (2000, 1, 3) is NaN; values must be finite");
    expect_bad_input(s.run("learn" + data + " --m 2 --report " + s.path("lr.json") + " -o " + s.path("l.json")),
                     "mhalearn learn: error: Y entry (2000, 1, 3) is NaN");
    expect_bad_input(s.run("learn" + data + " --m 2 --method adam --max-samples 5000 -o " + s.path("a.json")),
                     "Y entry (2000, 1, 3) is NaN");
    for (const char* out : {"r.json", "w.json", "lr.json", "l.json", "a.json"}) CHECK_FALSE(fs::exists(s.path(out)));
  }
}

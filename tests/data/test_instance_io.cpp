#include "test_tolerances.hpp"
#include "data/instance_io.hpp"
#include "model/instance_gen.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

using namespace mha;

namespace {
std::string valid_text() {
  GenerateOptions o;
  o.d = 8;
  o.k = 2;
  o.m = 1;
  GenerateResult g = generate_instance(o);
  REQUIRE(g.ok);
  return instance_to_json(g.instance).dump();
}

std::string error_of(const std::string& text) {
  InstanceReadResult r = instance_from_json_text(text, "inst.json");
  REQUIRE_FALSE(r.ok);
  return r.error;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}
}  // namespace

TEST_CASE("instance files reject bad input with one line naming the problem", "[io]") {
  const std::string good = valid_text();
  REQUIRE(instance_from_json_text(good, "inst.json").ok);
  CHECK_THAT(error_of("{\"format\": "), Catch::Contains("malformed or truncated"));
  CHECK_THAT(error_of(good.substr(0, good.size() / 2)), Catch::Contains("malformed or truncated"));
  CHECK_THAT(error_of("[1, 2]"), Catch::Contains("object"));
  CHECK_THAT(error_of(replace(good, "mhalearn.instance", "other")), Catch::Contains("format"));
  CHECK_THAT(error_of(replace(good, "\"schema_version\":1", "\"schema_version\":9")), Catch::Contains("schema_version"));
  CHECK_THAT(error_of(replace(good, "\"m\":1", "\"m\":0")), Catch::Contains("\"m\""));
  CHECK_THAT(error_of(replace(good, "\"m\":1", "\"m\":2")), Catch::Contains("heads"));
  CHECK_THAT(error_of(replace(good, "\"k\":2", "\"k\":9")), Catch::Contains("exceeds d"));
  CHECK_THAT(error_of(replace(good, "\"d\":8", "\"d\":9")), Catch::Contains("rows"));
  CHECK_THAT(error_of(replace(good, "\"inputs\":\"boolean\"", "\"inputs\":\"ternary\"")), Catch::Contains("inputs"));
  // JSON has no NaN literal: a NaN written as a string or null is not a number.
  CHECK_THAT(error_of(replace(good, "\"theta\":[[", "\"theta\":[[null,")), Catch::Contains("theta"));
  CHECK_THAT(error_of(replace(good, "\"theta\":[[", "\"theta\":[[NaN,")), Catch::Contains("malformed"));
  CHECK_THAT(error_of(replace(good, "\"theta\":[[", "\"theta\":[[1e999,")), Catch::Contains("malformed"));
  for (const std::string& e : {error_of("{"), error_of(replace(good, "\"m\":1", "\"m\":0"))})
    CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("writing is atomic and refuses invalid instances", "[io]") {
  const std::string path = (std::filesystem::temp_directory_path() / "mhalearn_test_io.json").string();
  std::remove(path.c_str());
  Instance bad;
  bad.k = 1;
  CHECK_THAT(write_instance(path, bad), Catch::Contains("m = 0"));
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_THAT(write_instance("/nonexistent-dir/x.json", instance_from_json_text(valid_text(), "x").instance),
             Catch::Contains("/nonexistent-dir/x.json"));
}

TEST_CASE("generation is a pure function of the options", "[generate]") {
  GenerateOptions o;
  GenerateResult a = generate_instance(o), b = generate_instance(o);
  REQUIRE(a.ok);
  REQUIRE(instance_to_json(a.instance) == instance_to_json(b.instance));
  for (const auto& h : a.instance.layer.heads) CHECK(h.theta.norm() == Approx(o.scale).epsilon(tolerance::rescaled_norm_relative(h.theta.size())));
  o.seed = 2;
  REQUIRE(instance_to_json(generate_instance(o).instance) != instance_to_json(a.instance));
  o.m = 0;
  CHECK_THAT(validate_generate_options(o), Catch::Contains("m must be"));
  o.m = 2;
  o.k = 17;
  CHECK_THAT(validate_generate_options(o), Catch::Contains("exceeds d"));
}

namespace {
// A valid instance whose `key` value is `depth` nested arrays: "[[[ ... ]]]".
std::string nested_under(const std::string& key, int depth) {
  const std::string good = valid_text();
  const std::string value = std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']');
  return good.substr(0, good.size() - 1) + ",\"" + key + "\":" + value + "}";
}
}  // namespace

TEST_CASE("deeply nested provenance or extensions are rejected while parsing", "[io][fuzz]") {
  // Regression: a ~131 KB file nesting 65,000 levels deep made check, forward,
  // sample and stage1 overflow the stack when the value was re-serialised.
  for (const std::string key : {"provenance", "extensions"}) {
    CAPTURE(key);
    const std::string text = nested_under(key, 65000);
    CHECK(text.size() > 130000);
    const std::string e = error_of(text);
    CHECK(e == "inst.json: JSON nested deeper than 64 levels");
  }
  // The limit counts every level: the file's own object is the first one.
  const InstanceReadResult at_limit = instance_from_json_text(nested_under("provenance", kMaxJsonDepth - 1), "inst.json");
  REQUIRE(at_limit.ok);
  CHECK(at_limit.instance.provenance_json.size() == 2 * (kMaxJsonDepth - 1));
  CHECK_THAT(error_of(nested_under("provenance", kMaxJsonDepth)), Catch::Contains("nested deeper than 64 levels"));
  // Deep objects count like deep arrays; a malformed deep file is still malformed.
  std::string objects;
  for (int i = 0; i < 1000; ++i) objects += "{\"a\":";
  CHECK_THAT(error_of(objects + "1" + std::string(1000, '}')), Catch::Contains("nested deeper than 64 levels"));
  CHECK_THAT(error_of(objects), Catch::Contains("malformed or truncated"));
}

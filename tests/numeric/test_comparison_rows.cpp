// A row's bookkeeping as the report shows it (src/numeric/comparison.hpp): which
// item `record` keeps (the first of the largest difference/bound ratio, a zero
// difference with its bound), that a row that compared nothing never disagrees,
// which line `disagreement` names, and that `to_json` and `comparison_from_json`
// give back every precision, NaN and key. Each check is a hand-built row whose
// expected report is written out, so that a swapped branch or a moved tie rule in
// the bookkeeping fails here.
#include "numeric/comparison.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

using namespace mha;

TEST_CASE("record keeps the first item of the largest ratio, a zero difference with its bound", "[comparison]") {
  ComparisonItems c;
  c.record(0.0, 0.5);  // the first item: an exact 0 against 0.5 is kept with its bound
  CHECK(c.max_difference == 0.0);
  CHECK(c.bound == 0.5);
  CHECK(c.slack == 0.0);
  c.record(0.0, 0.25);  // the same ratio 0: the first is kept
  CHECK(c.bound == 0.5);
  c.record(0.125, 1.0);  // ratio 1/8: kept
  CHECK(c.max_difference == 0.125);
  CHECK(c.bound == 1.0);
  CHECK(c.slack == 0.125);
  c.record(0.25, 2.0);  // the same ratio 1/8 again: the first is kept
  CHECK(c.bound == 1.0);
  c.record(0.0625, 4.0);  // a smaller ratio: not kept
  CHECK(c.bound == 1.0);
  CHECK(c.compared == 5);
  CHECK(c.agree);
  c.record(3.0, 2.0);  // ratio 3/2 beyond the bound: kept, and the items disagree
  CHECK(c.max_difference == 3.0);
  CHECK(c.slack == 1.5);
  CHECK_FALSE(c.agree);
}

TEST_CASE("a row or part that compared nothing never disagrees, whatever its flag", "[comparison]") {
  Comparison row;
  row.agree = false;  // no item compared: the flag alone decides nothing
  CHECK_FALSE(disagrees(row));
  CHECK(std::string(verdict(row)) == "not compared");
  CHECK(disagreement(row).empty());
  ComparisonPart part;
  part.name = "empty";
  part.agree = false;
  CHECK(std::string(verdict(part)) == "not compared");
  Comparison with_part;
  with_part.record(0.0, 1.0);
  add_part(with_part, part);
  CHECK_FALSE(disagrees(with_part));
  CHECK(std::string(verdict(with_part)) == "agree");
}

TEST_CASE("disagreement names the row's own items first, else the first disagreeing part", "[comparison]") {
  Comparison row;
  row.quantity = "q";
  row.detail = "row detail";
  row.record(0.5, 1.0);
  ComparisonPart agreeing, wrong, also_wrong;
  agreeing.name = "agreeing";
  agreeing.detail = "fine";
  agreeing.record(0.5, 1.0);
  wrong.name = "wrong";
  wrong.detail = "beyond";
  wrong.record(2.0, 1.0);
  also_wrong.name = "also wrong";
  also_wrong.record(3.0, 1.0);
  add_part(row, agreeing);
  CHECK(disagreement(row).empty());
  CHECK_FALSE(to_json(row).contains("disagreement"));  // agreeing rows keep their keys
  add_part(row, wrong);
  add_part(row, also_wrong);
  CHECK(disagreement(row) == "wrong: beyond");
  CHECK(to_json(row).at("disagreement") == "wrong: beyond");
  row.record(5.0, 1.0);  // now the row's own items disagree too: they are named first
  CHECK(disagreement(row) == "q: row detail");
  CHECK(to_json(row).at("disagreement") == "q: row detail");
}

TEST_CASE("a row as JSON and back: every precision, NaN as null, the verdict and the parts", "[comparison]") {
  for (unsigned bits : {kExactRationals, kCertifiedDouble, 128u, 256u}) {
    INFO(bits);
    Comparison row;
    row.stage = "5";
    row.quantity = "q";
    row.record(0.25, 0.5);
    row.precision = bits;
    ComparisonPart part;
    part.name = "p";
    part.quantity = "pq";
    part.record(0.125, std::numeric_limits<double>::infinity());  // undecided: the bound is not finite
    part.precision = bits;
    add_part(row, part);
    const Comparison back = comparison_from_json(nlohmann::json::parse(to_json(row).dump()));  // as a file gives it back
    CHECK(back.precision == bits);
    CHECK(back.parts.at(0).precision == bits);
    CHECK(back.max_difference == 0.25);
    CHECK(back.bound == 0.5);
    CHECK(back.slack == 0.5);
    CHECK(back.compared == 1);
    CHECK(back.undecided == 1);
    CHECK(back.parts.at(0).name == "p");
    CHECK(back.parts.at(0).max_difference == 0.0);  // an undecided item is not kept as the largest
    CHECK(std::string(verdict(back)) == "agree");
    CHECK(std::string(verdict(back.parts.at(0))) == "undecided");
  }
  Comparison nan_row;
  nan_row.stage = "1";
  nan_row.record(std::numeric_limits<double>::quiet_NaN(), 1.0);
  const nlohmann::json j = nlohmann::json::parse(to_json(nan_row).dump());  // NaN written as null
  CHECK(j.at("max_difference").is_null());
  const Comparison back = comparison_from_json(j);
  CHECK(std::isnan(back.max_difference));
  CHECK(back.bound == 1.0);
  CHECK(disagrees(back));
  CHECK_THROWS_AS(comparison_from_json([&] {
                    nlohmann::json bad = j;
                    bad["precision"] = "quad";
                    return bad;
                  }()),
                  std::invalid_argument);
}

TEST_CASE("record: an exact zero against a bound of 0 is ratio 0, so a later item beyond its bound is the one kept", "[comparison]") {
  ComparisonItems c;
  c.record(0.0, 0.0);  // an exact zero on both paths with no rounding to allow for
  CHECK(c.slack == 0.0);  // not the NaN of 0/0
  CHECK(c.agree);
  c.record(1e-3, 1e-6);  // then an item beyond its bound: it is the row's largest ratio
  CHECK(c.max_difference == 1e-3);
  CHECK(c.bound == 1e-6);
  CHECK(c.slack == 1e-3 / 1e-6);
  CHECK_FALSE(c.agree);
  // Test of the tester: the keeping rule with the ratio as it was (0/0 = NaN) names the
  // exact zero as the largest item of a row that disagrees.
  struct Kept {
    bool first = true;
    double slack = 0, difference = 0;
  };
  auto keep = [](Kept& k, double difference, double bound, bool zero_ratio) {
    const double ratio = zero_ratio && difference == 0 ? 0.0 : difference / bound;
    if (k.first || ratio > k.slack || !(ratio == ratio)) {
      k.slack = ratio;
      k.difference = difference;
    }
    k.first = false;
  };
  Kept old, fixed;
  for (auto [difference, bound] : {std::pair{0.0, 0.0}, std::pair{1e-3, 1e-6}}) {
    keep(old, difference, bound, false);
    keep(fixed, difference, bound, true);
  }
  CHECK(old.difference == 0.0);
  CHECK(std::isnan(old.slack));
  CHECK(fixed.difference == 1e-3);
}

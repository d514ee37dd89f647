#include "sq_generators.hpp"

#include <algorithm>
#include <sstream>

namespace mha::test {

std::string to_string(SqQKind kind) {
  switch (kind) {
    case SqQKind::default_q: return "default_q";
    case SqQKind::linear: return "linear";
    case SqQKind::at_least_one: return "at_least_one";
    case SqQKind::any_positive: return "any_positive";
  }
  return "?";
}

std::vector<Rational> draw_sq_q(SqQKind kind, int m) {
  std::vector<Rational> q;
  if (kind == SqQKind::default_q) return sq_default_q(m);
  if (kind == SqQKind::linear) {
    for (int i = 0; i <= m; ++i) q.push_back(Rational(i + 1));
    return q;
  }
  // Distinct by construction (RapidCheck's inRange shrinks towards its
  // minimum, so rejection sampling could loop): an increasing chain of
  // positive steps, then shuffled.
  Rational v;
  if (kind == SqQKind::at_least_one) {
    v = Rational(1) + Rational(*rc::gen::inRange(0, 17)) / Rational(*rc::gen::inRange(1, 9));
  } else {
    v = Rational(*rc::gen::inRange(1, 17)) / Rational(*rc::gen::inRange(1, 17));
  }
  q.push_back(v);
  for (int i = 1; i <= m; ++i) {
    v += Rational(*rc::gen::inRange(1, 17)) / Rational(*rc::gen::inRange(1, 9));
    q.push_back(v);
  }
  for (int i = m; i > 0; --i) std::swap(q[i], q[*rc::gen::inRange(0, i + 1)]);
  return q;
}

SqFamilyParams draw_sq_params(int max_d, int max_m, std::vector<SqQKind> kinds) {
  SqFamilyParams p;
  p.m = *rc::gen::inRange(1, max_m + 1).as("m");
  p.d = *rc::gen::inRange(p.m + 1, std::max(p.m + 1, max_d) + 1).as("d");
  p.p = *rc::gen::inRange(0, p.d).as("p");
  p.q_out = *rc::gen::suchThat(rc::gen::inRange(0, p.d), [pp = p.p](int v) { return v != pp; }).as("q_out");
  // S: the first m entries of a random arrangement of [d] \ {p}.
  std::vector<int> pool;
  for (int j = 0; j < p.d; ++j)
    if (j != p.p) pool.push_back(j);
  for (int i = 0; i < p.m; ++i) {
    const int pick = *rc::gen::inRange(i, static_cast<int>(pool.size()));
    std::swap(pool[i], pool[pick]);
  }
  p.subset.assign(pool.begin(), pool.begin() + p.m);
  std::sort(p.subset.begin(), p.subset.end());
  const SqQKind kind = kinds[*rc::gen::inRange<size_t>(0, kinds.size())];
  RC_TAG(to_string(kind));
  p.q = draw_sq_q(kind, p.m);
  RC_LOG() << describe(p) << "\n";
  return p;
}

std::string describe(const SqFamilyParams& p) {
  std::ostringstream os;
  os << "SqFamilyParams{d=" << p.d << ", m=" << p.m << ", p=" << p.p << ", q_out=" << p.q_out << ", S={";
  for (size_t i = 0; i < p.subset.size(); ++i) os << (i ? "," : "") << p.subset[i];
  os << "}, q={";
  for (size_t i = 0; i < p.q.size(); ++i) os << (i ? "," : "") << rational_to_string(p.q[i]);
  os << "}}";
  return os.str();
}

}  // namespace mha::test

#include "stages/stage5/record.hpp"

#include "util/format.hpp"

namespace mha {

StageRecord span_record(const SpanResult& span, int round) {
  StageRecord r{"5", round, 0, span.seconds, "", {}};
  r.details = {{"dimension_fast", span.dimension_fast}, {"gap", span.gap}};
  r.summary = format("hull dimension %d by the singular-value gap (%.2e)", span.dimension_fast, span.gap);
  return r;
}

}  // namespace mha

#include "util/processes.hpp"

#include <algorithm>
#include <stdexcept>

namespace mha {

void check_processes(const Processes& p, const std::string& who) {
  if (p.size < 1 || p.rank < 0 || p.rank >= p.size || (p.size > 1 && !p.all_gather))
    throw std::invalid_argument(who + ": processes need 0 ≤ rank < size and an all-gather when size > 1");
}

void gather_blocks(const Processes& processes, int64_t count, int64_t per_item, double* all) {
  if (processes.size == 1) return;
  const auto [first, end] = processes.share(count);
  const std::vector<double> mine(all + first * per_item, all + end * per_item);
  const std::vector<double> gathered = processes.all_gather(mine);
  if (static_cast<int64_t>(gathered.size()) != count * per_item)
    throw std::logic_error("gather_blocks: gathered " + std::to_string(gathered.size()) + " values, expected " +
                           std::to_string(count * per_item));
  std::copy(gathered.begin(), gathered.end(), all);
}

bool first_process_value(const Processes& processes, bool value) {
  if (processes.size == 1) return value;
  return processes.all_gather({value ? 1.0 : 0.0}).front() != 0;
}

}  // namespace mha

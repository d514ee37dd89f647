#include "util/processes.hpp"

#include <stdexcept>

namespace mha {

void check_processes(const Processes& p, const std::string& who) {
  if (p.size < 1 || p.rank < 0 || p.rank >= p.size || (p.size > 1 && !p.all_gather))
    throw std::invalid_argument(who + ": processes need 0 ≤ rank < size and an all-gather when size > 1");
}

bool first_process_value(const Processes& processes, bool value) {
  if (processes.size == 1) return value;
  return processes.all_gather({value ? 1.0 : 0.0}).front() != 0;
}

}  // namespace mha

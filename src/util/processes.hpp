// The processes that share a run's loops (the CLI's MPI ranks; src/cli/processes.hpp).
// Every process runs the same deterministic computation and makes the same
// sequence of calls; a shared loop gives each process a contiguous block of its
// indices (share), and all_gather concatenates every process's vector in rank
// order (an all-gather of varying sizes), so what is merged afterwards does not
// depend on the split. Default: one process. The library has no MPI; the CLI
// supplies the all-gather (src/cli/processes_mpi.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mha {

struct Processes {
  int rank = 0, size = 1;
  std::function<std::vector<double>(const std::vector<double>& mine)> all_gather = {};  // needed when size > 1

  // Process r's block [first, end) of `count` indices: count·r/size .. count·(r+1)/size.
  std::pair<int64_t, int64_t> share_of(int r, int64_t count) const {
    return {count * r / size, count * (r + 1) / size};
  }
  // This process's block.
  std::pair<int64_t, int64_t> share(int64_t count) const { return share_of(rank, count); }
  // Adds each process's block size of `count` to by_process[r] (size entries).
  void count_shares(int64_t count, std::vector<int64_t>& by_process) const {
    for (int r = 0; r < size; ++r) {
      const std::pair<int64_t, int64_t> block = share_of(r, count);
      by_process[static_cast<size_t>(r)] += block.second - block.first;
    }
  }
  // Every process's `mine`, concatenated in rank order (`mine` itself for one process).
  std::vector<double> gather(const std::vector<double>& mine) const { return size == 1 ? mine : all_gather(mine); }
};

// For a loop over `count` items shared by share(): `all` holds count·per_item doubles
// (item by item), of which this process has filled its own block; afterwards every
// block is every process's, as if one process had filled them all. One all-gather
// (none for one process); throws std::logic_error when the gathered size is not
// count·per_item (a process that shared a different loop).
void gather_blocks(const Processes& processes, int64_t count, int64_t per_item, double* all);

// Throws std::invalid_argument naming `who` unless 0 ≤ rank < size and, for
// size > 1, an all-gather is set.
void check_processes(const Processes& processes, const std::string& who);

// `value` as the first process has it, on every process (one all-gather): for
// decisions that read a clock, which would otherwise differ between processes.
bool first_process_value(const Processes& processes, bool value);

}  // namespace mha

// Threads that stand for the ranks of an MPI job (util/processes.hpp): an
// all-gather between them, and a helper that runs one function per rank.
#pragma once

#include "util/processes.hpp"

#include <mpfr.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mha::test {

// An all-gather between threads: every rank's vector, concatenated in rank order.
class ThreadGather {
 public:
  explicit ThreadGather(int size) : parts_(size) {}
  std::vector<double> gather(int rank, const std::vector<double>& mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    const int64_t round = round_;
    parts_[rank] = mine;
    if (++arrived_ == static_cast<int>(parts_.size())) {
      result_.clear();
      for (const auto& p : parts_) result_.insert(result_.end(), p.begin(), p.end());
      arrived_ = 0;
      ++round_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return round_ != round; });
    }
    return result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<double>> parts_;
  std::vector<double> result_;
  int arrived_ = 0;
  int64_t round_ = 0;
};

// What a thread that stood for a rank frees as it ends: MPFR's per-thread caches
// (its constants, filled by the reference paths a rank may run, e.g. polishing's
// rounding measurement), which LeakSanitizer reports once the thread is gone.
inline void end_rank_thread() { mpfr_free_cache(); }

// run(processes) on `size` threads, each with its rank's Processes, joined. Catch's
// assertions are not thread-safe: `run` stores its results, the caller checks them.
inline void run_as_ranks(int size, const std::function<void(const Processes&)>& run) {
  ThreadGather gather(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      Processes p;
      p.rank = r;
      p.size = size;
      p.all_gather = [&gather, r](const std::vector<double>& mine) { return gather.gather(r, mine); };
      run(p);
      end_rank_thread();
    });
  for (auto& t : ranks) t.join();
}

}  // namespace mha::test

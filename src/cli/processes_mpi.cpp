// The MPI job (src/cli/processes.hpp): joined only when mpirun or mpiexec
// started this process, so a plain `mhalearn` never initialises MPI.
#include "cli/processes.hpp"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>

namespace mha::cli {

namespace {
bool joined = false;
int rank = 0, size = 1;

// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx and MPICH's Hydra launchers set PMIX_RANK or PMI_SIZE.
bool started_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

// Concatenates every rank's vector in rank order.
std::vector<double> all_gather(const std::vector<double>& mine) {
  if (mine.size() > static_cast<size_t>(INT_MAX)) throw std::runtime_error("a rank's share of a shared loop exceeds INT_MAX entries");
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(size), offsets(size);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    if (total > INT_MAX) throw std::runtime_error("a shared loop's gathered results exceed INT_MAX entries");
    offsets[r] = static_cast<int>(total);
    total += counts[r];
  }
  std::vector<double> all(static_cast<size_t>(total));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  return all;
}
}  // namespace

std::string start_processes(int& argc, char**& argv) {
  if (!started_by_mpirun()) return "";
  // Only the main thread calls MPI (between the OpenMP loops).
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return "MPI_Init_thread failed";
  joined = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return "";
}

void finish_processes() {
  if (joined) MPI_Finalize();
  joined = false;
}

int process_rank() { return rank; }
int process_count() { return size; }
bool prints_and_writes() { return rank == 0; }

Processes job_processes() {
  Processes p;
  p.rank = rank;
  p.size = size;
  if (size > 1) p.all_gather = all_gather;
  return p;
}

void abort_processes(int code) {
  if (joined && size > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace mha::cli

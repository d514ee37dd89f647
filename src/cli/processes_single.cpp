// One process: the build has no MPI (src/cli/processes.hpp). Under mpirun each
// rank of such a build would run the whole command alone, so say so instead.
#include "cli/processes.hpp"

#include <cstdlib>

namespace mha::cli {

std::string start_processes(int&, char**&) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* s = std::getenv(v); s && std::atoi(s) > 1)
      return "started by mpirun, but this mhalearn was built without MPI (install libopenmpi-dev and reconfigure)";
  return "";
}
void finish_processes() {}
int process_rank() { return 0; }
int process_count() { return 1; }
bool prints_and_writes() { return true; }
Processes job_processes() { return {}; }
void abort_processes(int) {}

}  // namespace mha::cli

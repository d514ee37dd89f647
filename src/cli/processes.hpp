// The processes of one run: this process alone, or the ranks of an MPI job
// (`mpirun -np N mhalearn learn …`). src/cli/processes_mpi.cpp implements it
// when CMake finds MPI, src/cli/processes_single.cpp otherwise; the library
// itself has no MPI (the learner takes a Processes hook, util/processes.hpp).
//
// Under mpirun every rank parses the same arguments and runs the same
// deterministic stages; only `learn` shares work (its sample loops and stage 6's
// tuple loops, src/learn/learner.hpp). Only
// rank 0 prints and writes files: the other ranks' stdout and stderr go to
// /dev/null, and commands other than learn return at once on them.
#pragma once

#include "util/processes.hpp"

#include <string>

namespace mha::cli {

// Joins the MPI job when this process was started by mpirun or mpiexec (their
// environment says so); otherwise, or without MPI in the build, does nothing.
// Returns "" or one line saying why the job could not be joined.
std::string start_processes(int& argc, char**& argv);
// Leaves the job (MPI_Finalize) if start_processes joined one.
void finish_processes();

int process_rank();   // 0 outside an MPI job
int process_count();  // 1 outside an MPI job
bool prints_and_writes();  // rank 0: the one that prints and writes files

// The learner's hook: this job's ranks and an all-gather over them.
Processes job_processes();

// Ends the process at once on every rank with `code` (MPI_Abort), for a
// failure on some ranks only, where the others would wait in a collective
// forever; outside a job it returns and the caller exits as usual.
void abort_processes(int code);

}  // namespace mha::cli

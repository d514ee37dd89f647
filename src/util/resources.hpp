// What a run cost the machine, beside its wall time: the process's CPU time (user
// + system, all threads) and the load average when it started and when it
// reported. A wall time measured on a shared machine says little alone; with the
// CPU time and the load a reader can tell the run's own cost from the machine's
// other work (docs/formats.md, "Provenance").
#pragma once

#include <nlohmann/json.hpp>

namespace mha {

// {"cpu_seconds": user + system of this process so far, "user_seconds",
//  "system_seconds", "load_average_start": [1, 5, 15 min] when the process
//  started, "load_average_end": the same now}. Load averages are absent where
// the system does not give them.
nlohmann::json process_resources();

}  // namespace mha

#include "commands/stop.hpp"

#include <csignal>

namespace mha::commands {

namespace {
volatile std::sig_atomic_t g_stop = 0;
}  // namespace

void request_stop() { g_stop = 1; }
bool stop_requested() { return g_stop != 0; }
void clear_stop_request() { g_stop = 0; }

}  // namespace mha::commands

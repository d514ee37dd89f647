// A request that a long learn stop at its next safe point: made by the command
// line's SIGINT and SIGTERM handlers (src/cli/stop_signals.hpp) or by the
// tests' MHALEARN_STOP_AT_SAFE_POINT (learn_checkpoints.hpp), read at each
// safe point. Async-signal-safe to make.
#pragma once

namespace mha::commands {

void request_stop();
bool stop_requested();
void clear_stop_request();

}  // namespace mha::commands

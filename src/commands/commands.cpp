#include "commands/declarations.hpp"

namespace mha::commands {

namespace {

// What every subcommand takes besides its own options.
Option quiet() {
  return {"quiet", Type::flag, "no progress lines on stderr (a terminal's bar, or a log's line every 10 s)",
          Role::printing};
}

std::vector<Command> all_commands() {
  std::vector<Command> all = {generate_command(), check_command(),  sample_command(),     forward_command(),
                              import_command(),   stage1_command(), sculpt_command(),     study_wsum_command(),
                              learn_command(),    verify_command(), demo_command(),       hard_command()};
  for (Command& c : all) c.options.push_back(quiet());
  return all;
}

}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> all = all_commands();
  return all;
}

}  // namespace mha::commands

// The command line from the declarations (commands/schema.hpp): every
// subcommand and option registered with CLI11 as the schema declares it —
// its flag, its type and range or choices as --help shows them, its default,
// what it needs or excludes — and, once parsed, the arguments as the schema
// checks them.
#pragma once

#include "commands/schema.hpp"

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mha::cli {

class CommandLine {
 public:
  CommandLine();
  CLI::App& app() { return app_; }
  // After app().parse(): the chosen subcommand and its arguments, checked by
  // the schema ("" or the one line that refuses them).
  const commands::Command& chosen() const;
  std::string arguments(commands::Arguments& out) const;

 private:
  struct Given {
    std::map<std::string, std::string> text;                // an option's text as given
    std::map<std::string, std::vector<std::string>> lists;  // a positional list (verify's stages)
    std::map<std::string, bool> flags;
  };
  void add(const commands::Command& command);
  CLI::App app_;
  std::map<std::string, std::unique_ptr<Given>> given_;  // by subcommand
};

}  // namespace mha::cli

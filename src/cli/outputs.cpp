#include "cli/outputs.hpp"

#include <filesystem>
#include <map>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

namespace mha::cli {

namespace fs = std::filesystem;

namespace {

// Per subcommand: options naming files written, files written with a .json
// sidecar beside them, directories written into, and inputs.
struct Roles {
  std::vector<std::string> files, files_with_sidecar, directories, inputs;
};

const std::map<std::string, Roles>& role_table() {
  static const std::map<std::string, Roles> table = {
      {"generate", {{"-o"}, {}, {}, {}}},
      {"check", {{}, {}, {}, {"instance"}}},
      {"sample", {{}, {"--x", "--y"}, {}, {"instance"}}},
      {"forward", {{}, {"-o"}, {}, {"instance", "--x"}}},
      {"import", {{"-o"}, {}, {}, {"--wq", "--wk", "--wv", "--wo"}}},
      {"stage1", {{"-o", "--report"}, {}, {}, {"instance", "--x", "--y"}}},
      {"sculpt", {{"-o", "--report"}, {}, {}, {"instance", "--x", "--y"}}},
      {"study-wsum", {{}, {}, {}, {}}},
      {"learn", {{"-o", "--report"}, {}, {"--checkpoint"}, {"instance", "--x", "--y"}}},
      {"verify", {{"--report"}, {}, {}, {"--instance", "--layer"}}},
      {"demo", {{}, {}, {"--out"}, {}}},
      {"hard", {{"-o", "--study-data"}, {}, {}, {}}},
  };
  return table;
}

// The option's value when it was given (or has a default, as demo's --out).
void collect(const CLI::App& cmd, const std::vector<std::string>& names, bool sidecar, std::vector<NamedPath>& out) {
  for (const std::string& name : names) {
    const CLI::Option* opt = cmd.get_option_no_throw(name);
    if (!opt || (opt->empty() && opt->get_default_str().empty())) continue;
    const std::string path = opt->empty() ? opt->get_default_str() : opt->as<std::string>();
    if (path.empty()) continue;
    out.push_back({name, path});
    if (sidecar) out.push_back({name + " (its .json sidecar)", path + ".json"});
  }
}

bool writable_directory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

fs::path directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

std::string file_problem(const NamedPath& p) {
  std::error_code ec;
  if (fs::is_directory(p.path, ec)) return p.option + " " + p.path + ": is a directory, not a file";
  const fs::path dir = directory_of(p.path);
  if (!fs::exists(dir, ec)) return p.option + " " + p.path + ": directory " + dir.string() + " does not exist";
  if (!writable_directory(dir))
    return p.option + " " + p.path + ": directory " + dir.string() + " is not a writable directory";
  return "";
}

std::string directory_problem(const NamedPath& p) {
  std::error_code ec;
  if (fs::exists(p.path, ec)) {
    if (!fs::is_directory(p.path, ec)) return p.option + " " + p.path + ": exists and is not a directory";
    if (!writable_directory(p.path)) return p.option + " " + p.path + ": directory is not writable";
    return "";
  }
  // Created with its missing parents: the nearest existing ancestor must take them.
  fs::path ancestor = fs::absolute(p.path, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) ancestor = ancestor.parent_path();
  if (!writable_directory(ancestor))
    return p.option + " " + p.path + ": cannot be created (" + ancestor.string() + " is not a writable directory)";
  return "";
}

// Two paths name one file: the same inode when both exist, else the same
// normalised absolute path (symbolic links of existing parents resolved).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a), ea), pb = fs::weakly_canonical(fs::absolute(b), eb);
  return !ea && !eb && pa == pb;
}

}  // namespace

CommandPaths command_paths(const CLI::App& cmd) {
  CommandPaths out;
  const auto row = role_table().find(cmd.get_name());
  if (row == role_table().end()) return out;
  const Roles& r = row->second;
  collect(cmd, r.files, false, out.output_files);
  collect(cmd, r.files_with_sidecar, true, out.output_files);
  collect(cmd, r.directories, false, out.output_directories);
  collect(cmd, r.inputs, false, out.inputs);
  return out;
}

std::string path_problem(const CommandPaths& paths) {
  for (const NamedPath& p : paths.output_files)
    if (auto e = file_problem(p); !e.empty()) return e;
  for (const NamedPath& p : paths.output_directories)
    if (auto e = directory_problem(p); !e.empty()) return e;
  const std::vector<NamedPath>& outs = paths.output_files;
  for (size_t i = 0; i < outs.size(); ++i) {
    for (size_t j = i + 1; j < outs.size(); ++j)
      if (same_file(outs[i].path, outs[j].path))
        return outs[i].option + " and " + outs[j].option + " name the same file " + outs[i].path;
    for (const NamedPath& in : paths.inputs)
      if (same_file(outs[i].path, in.path))
        return outs[i].option + " " + outs[i].path + " is also the input " + in.option + ": it would be overwritten";
  }
  return "";
}

}  // namespace mha::cli

#include "commands/paths.hpp"

#include "data/atomic_file.hpp"

#include <climits>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace mha::commands {

namespace fs = std::filesystem;

bool valid_utf8(const std::string& s) {
  static const uint32_t kSmallest[4] = {0, 0x80, 0x800, 0x10000};  // below: an overlong form
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t code = c;
    if (c >= 0x80) {
      if ((c >> 5) == 0x6) extra = 1, code = c & 0x1f;
      else if ((c >> 4) == 0xe) extra = 2, code = c & 0x0f;
      else if ((c >> 3) == 0x1e) extra = 3, code = c & 0x07;
      else return false;
      if (i + static_cast<size_t>(extra) >= s.size()) return false;
      for (int j = 1; j <= extra; ++j) {
        const unsigned char n = static_cast<unsigned char>(s[i + j]);
        if ((n >> 6) != 0x2) return false;
        code = (code << 6) | (n & 0x3f);
      }
      if (code < kSmallest[extra] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return false;
    }
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

std::string printable_path(const std::string& path) {
  if (valid_utf8(path)) return path;
  std::string out;
  for (const char ch : path) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x80 && c >= 0x20) {
      out += ch;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

namespace {

// A path the arguments name, with the option that named it, as a message names it.
struct Named {
  std::string option;  // "-o", "--report", "--x (its .json sidecar)", "instance"
  std::string path;
};

fs::path folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

bool writable_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

// The kernel's virtual file systems, which hold no files of ours.
const char* virtual_file_system(const fs::path& dir) {
  struct statfs s;
  if (::statfs(dir.c_str(), &s) != 0) return nullptr;
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0x9fa0: return "/proc (procfs)";
    case 0x62656572: return "/sys (sysfs)";
    case 0x27e0eb: case 0x63677270: return "a cgroup file system";
    case 0x64626720: return "debugfs";
    case 0x74726163: return "tracefs";
    case 0x73636673: return "securityfs";
    case 0xcafe4a11: return "bpffs";
    default: return nullptr;
  }
}

// The name fits the file system, and the path (with a temporary file's suffix) the system.
std::string name_problem(const Named& p, const fs::path& dir) {
  const std::string name = fs::path(p.path).filename().string();
  const long max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const size_t limit = max > 0 ? static_cast<size_t>(max) : 255;
  if (name.size() > limit)
    return p.option + " " + printable_path(p.path).substr(0, 40) + "...: its name has " + std::to_string(name.size()) +
           " bytes; the file system takes " + std::to_string(limit) + " at most";
  if (fs::absolute(p.path).string().size() + sizeof(".tmp.XXXXXX") > static_cast<size_t>(PATH_MAX))
    return p.option + " " + printable_path(p.path).substr(0, 40) + "...: the path is longer than the system's " +
           std::to_string(PATH_MAX - 12) + " bytes";
  return "";
}

std::string file_problem(const Named& p) {
  const std::string where = p.option + " " + printable_path(p.path);
  const OutputTarget t = output_target(p.path);
  if (!t.problem.empty()) return where + ": " + t.problem;
  if (t.write_through) return "";
  const fs::path dir = folder_of(t.path);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return where + ": directory " + printable_path(dir.string()) + " does not exist";
  if (const char* v = virtual_file_system(dir))
    return where + ": " + printable_path(dir.string()) + " is on " + v + ", a view of the kernel that holds no files";
  if (!writable_folder(dir)) return where + ": directory " + printable_path(dir.string()) + " is not a writable directory";
  return name_problem({p.option, t.path}, dir);
}

std::string folder_problem(const Named& p, bool must_exist) {
  const std::string where = p.option + " " + printable_path(p.path);
  std::error_code ec;
  if (fs::exists(p.path, ec)) {
    if (!fs::is_directory(p.path, ec)) return where + ": exists and is not a directory";
    if (const char* v = virtual_file_system(p.path)) return where + ": is on " + std::string(v) + ", a view of the kernel";
    if (!writable_folder(p.path)) return where + ": directory is not writable";
    return "";
  }
  if (must_exist) return where + ": no such directory";
  // Created with its missing parents: the nearest existing ancestor must take them.
  fs::path ancestor = fs::absolute(p.path, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) ancestor = ancestor.parent_path();
  if (const char* v = virtual_file_system(ancestor))
    return where + ": " + printable_path(ancestor.string()) + " is on " + v + ", a view of the kernel that holds no files";
  if (!writable_folder(ancestor))
    return where + ": cannot be created (" + printable_path(ancestor.string()) + " is not a writable directory)";
  return name_problem(p, ancestor);
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

bool character_device(const std::string& path) {
  struct stat s;
  return ::stat(path.c_str(), &s) == 0 && S_ISCHR(s.st_mode);
}

std::string same_file_problem(const std::vector<Named>& outs, const std::vector<Named>& inputs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    for (size_t j = i + 1; j < outs.size(); ++j)
      if (same_file(outs[i].path, outs[j].path) && !character_device(outs[i].path))
        return outs[i].option + " and " + outs[j].option + " name the same file " + printable_path(outs[i].path);
    for (const Named& in : inputs)
      if (same_file(outs[i].path, in.path))
        return outs[i].option + " " + printable_path(outs[i].path) + " is also the input " + in.option +
               ": it would be overwritten";
  }
  return "";
}

// The paths of the arguments by role: output files (with sidecars), folders written, folders read and written, inputs.
struct Paths {
  std::vector<Named> files, folders, inout_folders, inputs;
};

Paths collect(const Arguments& a) {
  Paths p;
  for (const Option& o : a.command->options) {
    const bool path_role = o.role == Role::instance_in || o.role == Role::array_in || o.role == Role::file_out ||
                           o.role == Role::folder_out || o.role == Role::folder_inout;
    if (!path_role || (a.spelling == Spelling::python && !o.in_python())) continue;
    const std::string& path = a.text(o.name);  // a folder's default counts (demo's --out)
    if (path.empty() || (!a.values.count(o.name) && !std::holds_alternative<std::string>(o.fallback))) continue;
    const Named named{a.spell(o.name) == "--output" ? "-o" : a.spell(o.name), path};
    if (o.role == Role::file_out) {
      p.files.push_back(named);
      if (o.sidecar && !output_target(path).write_through)  // a device or a pipe gets no sidecar
        p.files.push_back({named.option + " (its .json sidecar)", path + ".json"});
    } else if (o.role == Role::folder_out) {
      p.folders.push_back(named);
    } else if (o.role == Role::folder_inout) {
      p.inout_folders.push_back(named);
    } else {
      p.inputs.push_back(named);
    }
  }
  return p;
}

}  // namespace

std::string output_file_problem(const std::string& name, const std::string& path) {
  if (!valid_utf8(path))
    return name + " " + printable_path(path) + ": the name is not UTF-8, which the provenance (JSON text) cannot record";
  return file_problem({name, path});
}

std::string path_problem(const Arguments& args) {
  const Paths p = collect(args);
  for (const auto* group : {&p.inputs, &p.files, &p.folders, &p.inout_folders})
    for (const Named& n : *group)
      if (!valid_utf8(n.path))
        return n.option + " " + printable_path(n.path) +
               ": the name is not UTF-8, which the provenance (JSON text) cannot record";
  for (const Named& n : p.files)
    if (auto e = file_problem(n); !e.empty()) return e;
  for (const Named& n : p.folders)
    if (auto e = folder_problem(n, false); !e.empty()) return e;
  for (const Named& n : p.inout_folders)
    if (auto e = folder_problem(n, true); !e.empty()) return e;
  return same_file_problem(p.files, p.inputs);
}

}  // namespace mha::commands

#include "commands/schema.hpp"

#include "commands/status.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace mha::commands {

using nlohmann::json;

Range range(double lo, double hi, bool lo_open) { return {lo, hi, lo_open, true}; }

std::string Option::flag() const {
  if (positional) return name;
  return short_flag ? std::string("-") + short_flag + ",--" + name : "--" + name;
}

Option Option::with_default(Value value) const {
  Option o = *this;
  o.default_text = std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "";
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>) {
          char text[32];
          std::snprintf(text, sizeof text, "%g", x);
          return text;
        } else if constexpr (std::is_same_v<T, std::string>) return x;
        else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<std::string>>) {
          std::string out;
          for (const auto& v : x) {
            if constexpr (std::is_same_v<T, std::vector<int64_t>>) out.append(out.empty() ? "" : ",").append(std::to_string(v));
            else out.append(out.empty() ? "" : ",").append(v);
          }
          return out;
        } else return std::to_string(x);
      },
      value);
  o.fallback = std::move(value);
  return o;
}

std::string Option::keyword() const {
  if (!python_name.empty()) return python_name;
  std::string out = name;
  for (char& c : out) c = c == '-' ? '_' : c;
  return out;
}

const Option* Command::find(const std::string& n) const {
  for (const Option& o : options)
    if (o.name == n) return &o;
  return nullptr;
}

const Option* Command::find_keyword(const std::string& keyword) const {
  for (const Option& o : options)
    if (o.in_python() && o.keyword() == keyword) return &o;
  return nullptr;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

// ---- Arguments ------------------------------------------------------------------

namespace {

const Option& declared(const Arguments& a, const std::string& name) {
  const Option* o = a.command ? a.command->find(name) : nullptr;
  if (!o) throw std::logic_error("the command has no option '" + name + "'");
  return *o;
}

// The value given, else the default.
const Value& value_of(const Arguments& a, const std::string& name) {
  const auto it = a.values.find(name);
  return it != a.values.end() ? it->second : declared(a, name).fallback;
}

template <class T>
const T& typed(const Arguments& a, const std::string& name) {
  const Value& v = value_of(a, name);
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw std::logic_error("option '" + name + "' has no value of the type asked for");
}

}  // namespace

bool Arguments::given(const std::string& name) const {
  return values.count(name) || instances.count(name) || arrays.count(name);
}

int64_t Arguments::integer(const std::string& name) const { return typed<int64_t>(*this, name); }
uint64_t Arguments::seed(const std::string& name) const { return typed<uint64_t>(*this, name); }
double Arguments::number(const std::string& name) const { return typed<double>(*this, name); }
bool Arguments::flag(const std::string& name) const {
  const Value& v = value_of(*this, name);
  return std::holds_alternative<bool>(v) && std::get<bool>(v);
}
std::vector<int64_t> Arguments::integers(const std::string& name) const {
  return typed<std::vector<int64_t>>(*this, name);
}
std::vector<std::string> Arguments::texts(const std::string& name) const {
  return typed<std::vector<std::string>>(*this, name);
}

const std::string& Arguments::text(const std::string& name) const {
  static const std::string none;
  const Value& v = value_of(*this, name);
  if (std::holds_alternative<std::monostate>(v)) return none;
  return typed<std::string>(*this, name);
}

int Arguments::threads(const std::string& name) const {
  return given(name) ? static_cast<int>(integer(name)) : default_threads();
}

std::string Arguments::spell(const std::string& name) const {
  const Option* o = command ? command->find(name) : nullptr;
  if (!o) return commands::spell(name, spelling);
  return spelling == Spelling::cli ? (o->positional ? o->name : "--" + o->name) : o->keyword();
}

std::string spell(const std::string& name, Spelling spelling) {
  if (spelling == Spelling::cli) return "--" + name;
  std::string out = name;
  for (char& c : out) c = c == '-' ? '_' : c;
  return out;
}

// ---- Values -------------------------------------------------------------------

std::string format_bound(double v, bool integer) {
  char text[32];
  if (integer && v >= two_to(16) && std::exp2(std::round(std::log2(v))) == v)
    std::snprintf(text, sizeof text, "2^%d", int(std::round(std::log2(v))));
  else if (integer)
    std::snprintf(text, sizeof text, "%.0f", v);
  else
    std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string format_range(const Option& o) {
  if (o.type == Type::seed) return "0..2^64-1";
  if (!o.choices.empty()) {
    std::string out;
    for (const std::string& c : o.choices) out.append(out.empty() ? "" : ", ").append(c);
    return out;
  }
  if (!o.range.set) return "";
  const bool integer = o.type == Type::integer || o.type == Type::integers;
  // Appended piece by piece: GCC 12 warns (-Wstringop-overflow, a false
  // positive) on `const char* + std::string&&` once this is inlined.
  std::string out = o.range.lo_open ? "(" : "";
  out.append(format_bound(o.range.lo, integer)).append("..").append(format_bound(o.range.hi, integer));
  if (o.range.lo_open) out.append("]");
  return out;
}

const char* type_name(Type type) {
  switch (type) {
    case Type::integer: return "integer";
    case Type::seed: return "seed";
    case Type::number: return "number";
    case Type::text: return "text";
    case Type::flag: return "flag";
    case Type::integers: return "integers";
    case Type::texts: return "words";
  }
  return "?";
}

namespace {

std::string out_of_range(const Option& o, double v) {
  const bool low = o.range.lo_open ? !(v > o.range.lo) : !(v >= o.range.lo);
  if (!low && v <= o.range.hi) return "";
  char got[40];
  std::snprintf(got, sizeof got, o.type == Type::number ? "%g" : "%.0f", v);
  return "must be in " + format_range(o) + ", got " + got;
}

bool blank_start(const std::string& s) { return !s.empty() && std::isspace(static_cast<unsigned char>(s[0])); }

std::string parse_integer(const Option& o, const std::string& text, int64_t& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || blank_start(text)) return "'" + text + "' is not an integer";
  if (errno == ERANGE) return "must be in " + format_range(o) + ", got " + text;
  return "";
}

std::string parse_seed(const std::string& text, uint64_t& out) {
  bool digits = !text.empty() && text.size() <= 20;
  for (const char c : text) digits = digits && c >= '0' && c <= '9';
  errno = 0;
  if (digits) out = std::strtoull(text.c_str(), nullptr, 10);
  if (!digits || errno == ERANGE) return "'" + text + "' is not a seed (an integer in 0..2^64-1)";
  return "";
}

std::string parse_number(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || blank_start(text) || std::isnan(out)) return "'" + text + "' is not a number";
  return "";
}

std::vector<std::string> comma_separated(const std::string& text) {
  std::vector<std::string> parts;
  size_t at = 0;
  for (size_t comma; (comma = text.find(',', at)) != std::string::npos; at = comma + 1)
    parts.push_back(text.substr(at, comma - at));
  parts.push_back(text.substr(at));
  return parts;
}

}  // namespace

std::string parse_text(const Option& o, const std::string& text, Value& out) {
  switch (o.type) {
    case Type::integer: {
      int64_t v = 0;
      if (auto e = parse_integer(o, text, v); !e.empty()) return e;
      out = v;
      return "";
    }
    case Type::seed: {
      uint64_t v = 0;
      if (auto e = parse_seed(text, v); !e.empty()) return e;
      out = v;
      return "";
    }
    case Type::number: {
      double v = 0;
      if (auto e = parse_number(text, v); !e.empty()) return e;
      out = v;
      return "";
    }
    case Type::integers: {
      std::vector<int64_t> list;
      for (const std::string& part : comma_separated(text)) {
        int64_t v = 0;
        if (auto e = parse_integer(o, part, v); !e.empty()) return e;
        list.push_back(v);
      }
      out = list;
      return "";
    }
    case Type::texts: out = comma_separated(text); return "";
    case Type::flag: out = true; return "";
    case Type::text: out = text; return "";
  }
  return "";
}

std::string check_value(const Option& o, const Value& value) {
  if (const auto* v = std::get_if<int64_t>(&value); v && o.range.set) return out_of_range(o, double(*v));
  if (const auto* v = std::get_if<double>(&value); v && o.range.set) return out_of_range(o, *v);
  if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) {
    if (list->empty()) return "needs at least one value";
    for (const int64_t v : *list)
      if (auto e = o.range.set ? out_of_range(o, double(v)) : ""; !e.empty()) return e;
  }
  if (const auto* v = std::get_if<std::string>(&value); v && !o.choices.empty()) {
    for (const std::string& c : o.choices)
      if (*v == c) return "";
    return "'" + *v + "' is not one of " + format_range(o);
  }
  return "";
}

std::string set_value(Arguments& args, const Option& o, Value value) {
  if (auto e = check_value(o, value); !e.empty()) return e;
  args.values[o.name] = std::move(value);
  return "";
}

std::string check_combinations(const Arguments& a) {
  for (const Option& o : a.command->options) {
    if (a.spelling == Spelling::python && !o.in_python()) continue;
    if (o.required && !a.given(o.name)) return a.spell(o.name) + " is required";
    if (!a.given(o.name)) continue;
    for (const std::string& n : o.needs)
      if (!a.given(n)) return a.spell(o.name) + " requires " + a.spell(n);
    for (const std::string& n : o.excludes)
      if (a.given(n)) return a.spell(o.name) + " excludes " + a.spell(n);
  }
  return "";
}

// ---- The schema as data ------------------------------------------------------

namespace {

json value_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

const char* role_name(Role r) {
  switch (r) {
    case Role::setting: return "setting";
    case Role::instance_in: return "instance file";
    case Role::array_in: return "array file";
    case Role::file_out: return "output file";
    case Role::folder_out: return "output folder";
    case Role::folder_inout: return "folder read and written";
    case Role::printing: return "printing";
  }
  return "?";
}

json option_json(const Option& o) {
  return {{"name", o.name}, {"flag", o.flag()}, {"keyword", o.keyword()}, {"type", type_name(o.type)},
          {"role", role_name(o.role)}, {"range", format_range(o)}, {"choices", o.choices},
          {"default", value_json(o.fallback)}, {"default_text", o.default_text}, {"help", o.help},
          {"required", o.required}, {"positional", o.positional}, {"python", o.in_python()},
          {"python_position", o.python_position}, {"negated", o.negated}, {"needs", o.needs},
          {"excludes", o.excludes}, {"sidecar", o.sidecar}, {"methods", o.methods}};
}

}  // namespace

json commands_json() {
  json out = json::array();
  for (const Command& c : commands()) {
    json options = json::array();
    for (const Option& o : c.options) options.push_back(option_json(o));
    out.push_back({{"name", c.name}, {"python_name", c.python_name}, {"summary", c.summary}, {"options", options}});
  }
  return out;
}

// ---- Shared options ------------------------------------------------------------

namespace option {

Option threads(std::string help) {
  Option o{"threads", Type::integer, std::move(help)};
  o.range = range(1, 256);
  o.default_text = "the machine's cores";
  return o;
}

Option seed(std::string help) {
  Option o{"seed", Type::seed, std::move(help)};
  o.fallback = uint64_t{1};
  o.default_text = "1";
  return o;
}

Option d(std::string help) {
  Option o{"d", Type::integer, std::move(help)};
  o.range = range(1, 1024);
  return o;
}

Option k(std::string help) {
  Option o{"k", Type::integer, std::move(help)};
  o.range = range(1, 1024);
  return o;
}

Option m(std::string help) {
  Option o{"m", Type::integer, std::move(help)};
  o.range = range(1, 64);
  return o;
}

Option scale(std::string help) {
  Option o{"scale", Type::number, std::move(help)};
  o.range = range(1e-6, 1e6);
  return o;
}

Option inputs() {
  Option o{"inputs", Type::text, "input distribution"};
  o.choices = {"boolean", "gaussian"};
  o.fallback = std::string("boolean");
  o.default_text = "boolean";
  return o;
}

Option precision(std::string help) {
  Option o{"precision", Type::integer, std::move(help)};
  o.range = range(53, two_to(16));
  o.fallback = int64_t{200};
  o.default_text = "200";
  return o;
}

Option max_seconds(std::string help) {
  Option o{"max-seconds", Type::number, std::move(help)};
  o.range = range(0, 1e7);
  o.fallback = 0.0;
  o.default_text = "0";
  return o;
}

Option label_noise() {
  Option o{"label-noise", Type::number,
           "add Gaussian noise of this relative size to every label (rms of the noise = this × rms of the sample's "
           "labels; drawn from --seed's label-noise stream)"};
  o.range = range(0, 1e6);
  o.fallback = 0.0;
  o.default_text = "0";
  return o;
}

Option output(std::string help) {
  Option o{"output", Type::text, std::move(help), Role::file_out};
  o.short_flag = 'o';
  return o;
}

Option report(std::string help) { return Option{"report", Type::text, std::move(help), Role::file_out}; }

Option json_flag(std::string help) { return Option{"json", Type::flag, std::move(help), Role::printing}; }

Option instance_file(std::string help) {
  Option o{"instance", Type::text, std::move(help), Role::instance_in};
  o.positional = true;
  o.python_position = 0;
  return o;
}

}  // namespace option

}  // namespace mha::commands

#include "cli/app.hpp"

#include "data/provenance.hpp"
#include "version.hpp"

namespace mha::cli {

using commands::Command;
using commands::Option;
using commands::Type;

namespace {

const char* cli_type(Type t) {
  switch (t) {
    case Type::integer: case Type::integers: return "INT";
    case Type::seed: return "UINT";
    case Type::number: return "FLOAT";
    default: return "TEXT";
  }
}

// What --help shows after the type: "in 1..256", "{fast,reference}".
std::string check_text(const Option& o) {
  if (!o.choices.empty()) {
    std::string out = "{";
    for (const std::string& c : o.choices) out.append(out.size() > 1 ? "," : "").append(c);
    return out + "}";
  }
  const std::string r = commands::format_range(o);
  return r.empty() ? "" : "in " + r;
}

// The schema's parse and check of a value, as CLI11 runs it on the text before anything else.
CLI::Validator validator(const Option& o) {
  return CLI::Validator(
      [o](std::string& text) {
        commands::Value v;
        if (auto e = commands::parse_text(o, text, v); !e.empty()) return e;
        return commands::check_value(o, v);
      },
      check_text(o));
}

}  // namespace

CommandLine::CommandLine()
    : app_("mhalearn: learn a multi-head attention layer (Chen & Li, STOC 2025) with verified reference paths") {
  app_.set_version_flag("--version", version_text());
  app_.require_subcommand(1);
  for (const Command& c : commands::commands()) add(c);
}

void CommandLine::add(const Command& c) {
  CLI::App* sub = app_.add_subcommand(c.name, c.summary);
  Given& g = *(given_[c.name] = std::make_unique<Given>());
  std::map<std::string, CLI::Option*> registered;
  for (const Option& o : c.options) {
    CLI::Option* opt = nullptr;
    const std::string flag = o.positional ? o.name : o.short_flag ? std::string("-") + o.short_flag + ",--" + o.name : "--" + o.name;
    if (o.type == Type::flag) {
      opt = sub->add_flag(flag, g.flags[o.name], o.help);
    } else if (o.positional && o.type == Type::texts) {
      opt = sub->add_option(flag, g.lists[o.name], o.help);
    } else {
      opt = sub->add_option(flag, g.text[o.name], o.help)->type_name(cli_type(o.type))->check(validator(o));
    }
    if (o.type != Type::flag && !o.default_text.empty()) opt->default_str(o.default_text);
    if (o.required) opt->required();
    registered[o.name] = opt;
  }
  for (const Option& o : c.options) {
    for (const std::string& n : o.needs) registered.at(o.name)->needs(registered.at(n));
    for (const std::string& n : o.excludes) registered.at(o.name)->excludes(registered.at(n));
  }
}

const Command& CommandLine::chosen() const {
  return *commands::find_command(app_.get_subcommands().front()->get_name());
}

std::string CommandLine::arguments(commands::Arguments& out) const {
  const Command& c = chosen();
  const CLI::App& sub = *app_.get_subcommands().front();
  const Given& g = *given_.at(c.name);
  out.command = &c;
  out.spelling = commands::Spelling::cli;
  for (const Option& o : c.options) {
    const std::string flag = o.positional ? o.name : "--" + o.name;
    if (sub.count(flag) == 0) continue;
    commands::Value v;
    if (o.type == Type::flag) v = g.flags.at(o.name);
    else if (o.positional && o.type == Type::texts) v = g.lists.at(o.name);
    else if (auto e = commands::parse_text(o, g.text.at(o.name), v); !e.empty()) return flag + ": " + e;
    if (auto e = commands::set_value(out, o, std::move(v)); !e.empty()) return flag + ": " + e;
  }
  return commands::check_combinations(out);
}

}  // namespace mha::cli

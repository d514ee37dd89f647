// The Python literal of a .npy header dict, parsed by recursive descent
// (strings, numbers, booleans, None, tuples, lists, dicts: as far as .npy
// headers use them), and the quoting of file text in one-line messages.
// What the dict must say is checked in npy_header.cpp.
#include "data/npy_detail.hpp"

namespace mha::npy_detail {

std::string printable(std::string_view s, size_t max_len) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

const char* kind_name(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::str: return "a string";
    case PyValue::Kind::integer: return "an integer";
    case PyValue::Kind::real: return "a float";
    case PyValue::Kind::boolean: return "a boolean";
    case PyValue::Kind::none: return "None";
    case PyValue::Kind::tuple: return "a tuple";
    case PyValue::Kind::list: return "a list";
    case PyValue::Kind::dict: return "a dict";
  }
  return "a value";
}

namespace {

// Nesting limit of the header literal: a valid header nests two levels deep;
// the limit only keeps hostile input from exhausting the stack.
constexpr int kMaxDepth = 32;

// Recursive descent over the header text. Every step advances `pos_` or
// fails, and recursion depth is bounded, so it terminates on any input.
class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : t_(text) {}

  // Parses one value followed only by whitespace.
  bool parse_all(PyValue& out, std::string& error) {
    skip_ws();
    if (!value(out, 0)) {
      error = error_;
      return false;
    }
    skip_ws();
    if (pos_ != t_.size()) {
      error = "unexpected '" + printable(t_.substr(pos_, 10)) + "' after the header dict at offset " +
              std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  std::string_view t_;
  size_t pos_ = 0;
  std::string error_;

  bool fail(const std::string& what) {
    error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[pos_]; }
  void skip_ws() {
    while (!at_end() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r' ||
                         t_[pos_] == '\f' || t_[pos_] == '\v'))
      ++pos_;
  }
  bool starts_with(std::string_view w) const { return t_.substr(pos_).starts_with(w); }
  bool is_ident_char(char c) const {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  bool keyword(std::string_view w) {
    if (!starts_with(w)) return false;
    const size_t end = pos_ + w.size();
    if (end < t_.size() && is_ident_char(t_[end])) return false;
    pos_ = end;
    return true;
  }

  bool value(PyValue& out, int depth) {
    if (depth > kMaxDepth) return fail("header nests too deeply");
    skip_ws();
    if (at_end()) return fail("header ends unexpectedly");
    const char c = peek();
    if (c == '\'' || c == '"') return string_value(out);
    if (c == '{') return dict_value(out, depth);
    if (c == '(') return tuple_value(out, depth);
    if (c == '[') return sequence(out, ']', PyValue::Kind::list, depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return number(out);
    if (keyword("True")) return out.kind = PyValue::Kind::boolean, out.bval = true, true;
    if (keyword("False")) return out.kind = PyValue::Kind::boolean, out.bval = false, true;
    if (keyword("None")) return out.kind = PyValue::Kind::none, true;
    return fail("unexpected '" + printable(t_.substr(pos_, 10)) + "'");
  }

  bool string_value(PyValue& out) {
    const char quote = t_[pos_++];
    out.kind = PyValue::Kind::str;
    out.text.clear();
    while (true) {
      if (at_end()) return fail("unterminated string");
      const char c = t_[pos_++];
      if (c == quote) return true;
      if (c == '\n') return fail("unterminated string");
      if (c == '\\') {
        if (at_end()) return fail("unterminated string");
        const char e = t_[pos_++];
        switch (e) {
          case 'n': out.text += '\n'; break;
          case 't': out.text += '\t'; break;
          case 'r': out.text += '\r'; break;
          case '0': out.text += '\0'; break;
          default: out.text += e; break;  // \\, \', \" and anything else: the character itself
        }
      } else {
        out.text += c;
      }
    }
  }

  bool number(PyValue& out) {
    const size_t start = pos_;
    bool negative = false;
    if (peek() == '-' || peek() == '+') negative = t_[pos_++] == '-';
    skip_ws();  // Python allows "- 3"
    if (at_end() || peek() < '0' || peek() > '9') return fail("malformed number");
    // Magnitude accumulated as unsigned; more digits than fit only set too_big.
    uint64_t mag = 0;
    bool big = false;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<uint64_t>(peek() - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - digit) / 10) big = true;
      if (!big) mag = mag * 10 + digit;
      ++pos_;
    }
    bool real = false;
    while (!at_end() && (peek() == '.' || peek() == 'e' || peek() == 'E' ||
                         (peek() >= '0' && peek() <= '9') ||
                         ((peek() == '-' || peek() == '+') && (t_[pos_ - 1] == 'e' || t_[pos_ - 1] == 'E')))) {
      real = true;
      ++pos_;
    }
    if (!real && (peek() == 'L' || peek() == 'l')) ++pos_;  // Python 2 long, as old numpy wrote shapes
    if (!at_end() && is_ident_char(peek())) return fail("malformed number");
    out.text = std::string(t_.substr(start, pos_ - start));
    if (real) {
      out.kind = PyValue::Kind::real;
      return true;
    }
    out.kind = PyValue::Kind::integer;
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (big || mag > limit + (negative ? 1 : 0)) {
      out.too_big = true;
      out.ival = 0;
    } else if (negative) {
      out.ival = mag == limit + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
    } else {
      out.ival = static_cast<int64_t>(mag);
    }
    return true;
  }

  // "(" ")" is the empty tuple, "(v)" is v itself, "(v," or "(v, w" a tuple.
  bool tuple_value(PyValue& out, int depth) {
    const size_t open = pos_;
    ++pos_;
    skip_ws();
    if (peek() == ')') {
      ++pos_;
      out = PyValue{};
      out.kind = PyValue::Kind::tuple;
      return true;
    }
    PyValue first;
    if (!value(first, depth + 1)) return false;
    skip_ws();
    if (peek() == ')') {
      ++pos_;
      out = std::move(first);
      return true;
    }
    if (peek() != ',') return fail("expected ',' or ')' in the tuple opened at offset " + std::to_string(open));
    ++pos_;
    out = PyValue{};
    out.kind = PyValue::Kind::tuple;
    out.items.push_back(std::move(first));
    return sequence_tail(out, ')', open, depth);
  }

  // Comma-separated values up to `close`, trailing comma allowed.
  bool sequence(PyValue& out, char close, PyValue::Kind kind, int depth) {
    const size_t open = pos_;
    ++pos_;
    out = PyValue{};
    out.kind = kind;
    return sequence_tail(out, close, open, depth);
  }

  // The rest of a sequence, positioned after its opening bracket or a comma.
  // Elements are parsed once each (no backtracking), so the work is linear.
  bool sequence_tail(PyValue& out, char close, size_t open, int depth) {
    while (true) {
      skip_ws();
      if (at_end()) return fail("unclosed bracket opened at offset " + std::to_string(open));
      if (peek() == close) {
        ++pos_;
        return true;
      }
      PyValue item;
      if (!value(item, depth + 1)) return false;
      out.items.push_back(std::move(item));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == close) continue;
      return fail(std::string("expected ',' or '") + close + "'");
    }
  }

  bool dict_value(PyValue& out, int depth) {
    const size_t open = pos_;
    ++pos_;
    out = PyValue{};
    out.kind = PyValue::Kind::dict;
    while (true) {
      skip_ws();
      if (at_end()) return fail("unclosed '{' opened at offset " + std::to_string(open));
      if (peek() == '}') {
        ++pos_;
        return true;
      }
      PyValue key, val;
      if (!value(key, depth + 1)) return false;
      skip_ws();
      if (peek() != ':') return fail("expected ':' after a dict key");
      ++pos_;
      if (!value(val, depth + 1)) return false;
      out.items.push_back(std::move(key));
      out.items.push_back(std::move(val));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') continue;
      return fail("expected ',' or '}' in the header dict");
    }
  }
};

}  // namespace

bool parse_py_literal(std::string_view text, PyValue& out, std::string& error) {
  return LiteralParser(text).parse_all(out, error);
}

}  // namespace mha::npy_detail

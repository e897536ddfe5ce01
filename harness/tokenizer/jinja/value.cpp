#include "harness/tokenizer/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "harness/core/error.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::jinja {

Value Value::list(ValueList items, bool tuple) {
  Value v;
  v.type_ = Type::List;
  v.tuple_ = tuple;
  v.list_ = std::make_shared<ValueList>(std::move(items));
  return v;
}

Value Value::dict(std::shared_ptr<Dict> d) {
  Value v;
  v.type_ = Type::Dict;
  v.dict_ = std::move(d);
  return v;
}

Value Value::dict() { return dict(std::make_shared<Dict>()); }

bool Value::truthy() const {
  switch (type_) {
    case Type::Undefined:
    case Type::None: return false;
    case Type::Bool:
    case Type::Int: return i_ != 0;
    case Type::Float: return f_ != 0.0;
    case Type::String: return !str_->empty();
    case Type::List: return !list_->empty();
    case Type::Dict: return !dict_->entries.empty();
    case Type::Callable: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (type_) {
    case Type::Undefined: return "Undefined";
    case Type::None: return "NoneType";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::String: return "str";
    case Type::List: return tuple_ ? "tuple" : "list";
    case Type::Dict: return dict_->is_namespace ? "Namespace" : "dict";
    case Type::Callable: return "function";
  }
  return "object";
}

std::string py_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: exponent form when exp < -4 or >= 16.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const std::size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  bool neg = false;
  if (!mant.empty() && mant[0] == '-') {
    neg = true;
    mant.erase(0, 1);
  }
  std::string digits;
  for (const char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else {
    const auto point = static_cast<std::size_t>(exp) + 1;
    if (digits.size() <= point) {
      out = digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  }
  return neg ? "-" + out : out;
}

namespace {
bool py_printable(char32_t c) {
  if (c < 0x20 || c == 0x7F) return false;
  if (c >= 0x80 && c < 0xA0) return false;
  if (c == 0xAD) return false;
  if (c == 0x2028 || c == 0x2029) return false;
  if (c >= 0xD800 && c <= 0xDFFF) return false;
  return true;
}
}  // namespace

std::string py_str_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t at = i;
    const char32_t c = tok::next_codepoint(s, i);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (!py_printable(c)) {
      char buf[16];
      if (c < 0x100) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000) std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      else std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out.append(s, at, i - at);
    }
  }
  out += quote;
  return out;
}

std::string Value::repr() const {
  switch (type_) {
    case Type::Undefined: return "";
    case Type::None: return "None";
    case Type::Bool: return i_ ? "True" : "False";
    case Type::Int: return std::to_string(i_);
    case Type::Float: return py_float_repr(f_);
    case Type::String: return py_str_repr(*str_);
    case Type::List: {
      std::string out = tuple_ ? "(" : "[";
      for (std::size_t k = 0; k < list_->size(); ++k) {
        if (k) out += ", ";
        out += (*list_)[k].repr();
      }
      if (tuple_ && list_->size() == 1) out += ",";
      out += tuple_ ? ")" : "]";
      return out;
    }
    case Type::Dict: {
      std::string out = dict_->is_namespace ? "<Namespace " : "{";
      for (std::size_t k = 0; k < dict_->entries.size(); ++k) {
        if (k) out += ", ";
        out += dict_->entries[k].first.repr() + ": " + dict_->entries[k].second.repr();
      }
      out += dict_->is_namespace ? ">" : "}";
      return out;
    }
    case Type::Callable: return "<function " + fn_->name + ">";
  }
  return "";
}

std::string Value::to_str() const {
  if (type_ == Type::String) return *str_;
  if (type_ == Type::Undefined) return "";
  return repr();
}

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : entries)
    if (equals(k, key)) return &v;
  return nullptr;
}

const Value* Dict::find_str(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.is_string() && k.str() == key) return &v;
  return nullptr;
}

void Dict::set(const Value& key, Value v) {
  for (auto& [k, old] : entries)
    if (equals(k, key)) {
      old = std::move(v);
      return;
    }
  entries.emplace_back(key, std::move(v));
}

bool equals(const Value& a, const Value& b) {
  using T = Value::Type;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case T::Undefined:
    case T::None: return true;
    case T::String: return a.str() == b.str();
    case T::List: {
      if (a.items().size() != b.items().size()) return false;
      for (std::size_t i = 0; i < a.items().size(); ++i)
        if (!equals(a.items()[i], b.items()[i])) return false;
      return true;
    }
    case T::Dict: {
      const auto& x = a.dict_ref().entries;
      const auto& y = b.dict_ref().entries;
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* o = b.dict_ref().find(k);
        if (!o || !equals(v, *o)) return false;
      }
      return true;
    }
    case T::Callable: return &a.fn() == &b.fn();
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();  // UTF-8 order is code point order
  if (a.is_list() && b.is_list()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (less(x[i], y[i])) return true;
      if (less(y[i], x[i])) return false;
    }
    return x.size() < y.size();
  }
  throw Error("chat template: '<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

namespace {
void json_escape(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
      continue;
    }
    if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    const char32_t cp = tok::next_codepoint(s, i);
    char buf[16];
    if (cp < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    } else {
      const char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    }
    out += buf;
  }
  out += '"';
}

std::string json_key(const Value& k) {
  if (k.is_string()) return k.str();
  if (k.is_bool()) return k.as_bool() ? "true" : "false";
  if (k.is_none()) return "null";
  if (k.is_int()) return std::to_string(k.as_int());
  if (k.is_float()) return py_float_repr(k.as_double());
  throw Error("chat template: tojson: keys must be str, int, float, bool or None, not " + k.type_name());
}

void dump(std::string& out, const Value& v, const JsonDumpOptions& o, int level) {
  using T = Value::Type;
  const auto newline = [&](int lvl) {
    out += '\n';
    out.append(static_cast<std::size_t>(o.indent * lvl), ' ');
  };
  switch (v.type()) {
    case T::None: out += "null"; return;
    case T::Bool: out += v.as_bool() ? "true" : "false"; return;
    case T::Int: out += std::to_string(v.as_int()); return;
    case T::Float: {
      const double d = v.as_double();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d > 0 ? "Infinity" : "-Infinity";
      else out += py_float_repr(d);
      return;
    }
    case T::String: json_escape(out, v.str(), o.ensure_ascii); return;
    case T::List: {
      if (v.items().empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        if (i) out += o.item_separator;
        if (o.indent >= 0) newline(level + 1);
        dump(out, v.items()[i], o, level + 1);
      }
      if (o.indent >= 0) newline(level);
      out += ']';
      return;
    }
    case T::Dict: {
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& [k, val] : v.dict_ref().entries) entries.emplace_back(json_key(k), &val);
      if (o.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      if (entries.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += o.item_separator;
        if (o.indent >= 0) newline(level + 1);
        json_escape(out, entries[i].first, o.ensure_ascii);
        out += o.key_separator;
        dump(out, *entries[i].second, o, level + 1);
      }
      if (o.indent >= 0) newline(level);
      out += '}';
      return;
    }
    case T::Undefined:
      throw Error("chat template: tojson: Object of type Undefined is not JSON serializable" +
                  (v.undefined_hint().empty() ? std::string() : " ('" + v.undefined_hint() + "' is undefined)"));
    case T::Callable: throw Error("chat template: tojson: a function is not JSON serializable");
  }
}
}  // namespace

std::string json_dumps(const Value& v, const JsonDumpOptions& options) {
  std::string out;
  dump(out, v, options, 0);
  return out;
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json(e));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto d = std::make_shared<Dict>();
      d->entries.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) d->entries.emplace_back(Value(it.key()), from_json(it.value()));
      return Value::dict(std::move(d));
    }
    default: return Value::none();
  }
}

}  // namespace kvgate::jinja

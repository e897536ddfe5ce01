// Filters, tests, attribute/item access and the str/dict/list methods templates call, with the
// semantics of Jinja 3 in transformers' ImmutableSandboxedEnvironment (mutating methods refused).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <set>

#include "harness/core/error.h"
#include "harness/tokenizer/jinja/interpreter.h"
#include "harness/tokenizer/jinja/lexer.h"
#include "harness/tokenizer/jinja/strings.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::jinja {

namespace {

const std::set<std::string> kStrMethods = {
    "startswith", "endswith", "split",  "rsplit", "strip",   "lstrip",     "rstrip",  "replace",   "upper",
    "lower",      "title",    "capitalize", "find", "rfind", "index",      "rindex",  "count",     "join",
    "isdigit",    "isalpha",  "isalnum", "isspace", "islower", "isupper",  "isdecimal", "isnumeric", "splitlines",
    "format",     "zfill",    "center",  "ljust",  "rjust",  "removeprefix", "removesuffix", "casefold", "swapcase"};
const std::set<std::string> kDictMethods = {"items", "keys", "values", "get", "copy"};
const std::set<std::string> kDictUnsafe = {"pop", "popitem", "setdefault", "update", "clear"};
const std::set<std::string> kListMethods = {"index", "count", "copy"};
const std::set<std::string> kListUnsafe = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};

struct BoundMethod final : Callable {
  Value self;
  Value call(Interpreter& in, ValueList& args, Kwargs& kwargs) override;
};

Value bind(const Value& self, const std::string& method) {
  auto m = std::make_shared<BoundMethod>();
  m->self = self;
  m->name = method;
  return Value::callable(std::move(m));
}

// Positional-or-keyword argument access for builtins.
struct Args {
  Interpreter& in;
  ValueList& args;
  Kwargs& kwargs;
  int line;
  std::string fn;
  const Value* get(std::size_t pos, const char* name) const {
    if (pos < args.size()) return &args[pos];
    for (auto& [k, v] : kwargs)
      if (k == name) return &v;
    return nullptr;
  }
  Value value(std::size_t pos, const char* name, Value fallback) const {
    const Value* v = get(pos, name);
    return v ? *v : fallback;
  }
  std::optional<std::string> opt_str(std::size_t pos, const char* name) const {
    const Value* v = get(pos, name);
    if (!v || v->is_none() || v->is_undefined()) return std::nullopt;
    if (!v->is_string()) in.fail(line, fn + "(): argument '" + name + "' must be a string, not " + v->type_name());
    return v->str();
  }
  std::string str(std::size_t pos, const char* name) const {
    auto s = opt_str(pos, name);
    if (!s) in.fail(line, fn + "() missing argument '" + name + "'");
    return *s;
  }
  std::int64_t integer(std::size_t pos, const char* name, std::int64_t fallback) const {
    const Value* v = get(pos, name);
    if (!v || v->is_none()) return fallback;
    if (!v->is_int() && !v->is_bool()) in.fail(line, fn + "(): argument '" + name + "' must be an integer");
    return v->as_int();
  }
  bool flag(std::size_t pos, const char* name, bool fallback) const {
    const Value* v = get(pos, name);
    return v ? v->truthy() : fallback;
  }
};

const std::string& need_str(Interpreter& in, const Value& v, int line, const std::string& fn) {
  if (v.is_undefined()) undefined_error(in, v, line);
  if (!v.is_string()) in.fail(line, fn + ": expected a string, got " + v.type_name());
  return v.str();
}

Value str_list(std::vector<std::string> parts) {
  ValueList items;
  items.reserve(parts.size());
  for (auto& p : parts) items.emplace_back(std::move(p));
  return Value::list(std::move(items));
}

std::int64_t py_index_of(const std::string& hay, const std::string& needle, bool reverse) {
  const std::size_t f = reverse ? hay.rfind(needle) : hay.find(needle);
  if (f == std::string::npos) return -1;
  return static_cast<std::int64_t>(py_len(std::string_view(hay).substr(0, f)));
}

Value str_method(Interpreter& in, const std::string& s, const std::string& m, const Args& a) {
  if (m == "startswith" || m == "endswith") {
    const Value* p = a.get(0, "prefix");
    if (!p) in.fail(a.line, m + "() takes at least 1 argument");
    std::vector<std::string> cands;
    if (p->is_string()) cands.push_back(p->str());
    else if (p->is_list())
      for (const Value& x : p->items()) cands.push_back(need_str(in, x, a.line, m));
    else in.fail(a.line, m + "() argument must be str or a tuple of str");
    for (const auto& c : cands) {
      if (m == "startswith" ? s.compare(0, c.size(), c) == 0 && s.size() >= c.size()
                            : s.size() >= c.size() && s.compare(s.size() - c.size(), c.size(), c) == 0)
        return Value(true);
    }
    return Value(false);
  }
  if (m == "split") return str_list(py_split(s, a.opt_str(0, "sep"), static_cast<long>(a.integer(1, "maxsplit", -1))));
  if (m == "rsplit") return str_list(py_rsplit(s, a.opt_str(0, "sep"), static_cast<long>(a.integer(1, "maxsplit", -1))));
  if (m == "strip") return Value(py_strip(s, a.opt_str(0, "chars"), true, true));
  if (m == "lstrip") return Value(py_strip(s, a.opt_str(0, "chars"), true, false));
  if (m == "rstrip") return Value(py_strip(s, a.opt_str(0, "chars"), false, true));
  if (m == "replace") return Value(py_replace(s, a.str(0, "old"), a.str(1, "new"), static_cast<long>(a.integer(2, "count", -1))));
  if (m == "upper") return Value(py_upper(s));
  if (m == "lower" || m == "casefold") return Value(py_lower(s));
  if (m == "title") return Value(py_title(s));
  if (m == "capitalize") return Value(py_capitalize(s));
  if (m == "swapcase") {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
      const std::size_t at = i;
      tok::next_codepoint(s, i);
      const std::string ch = s.substr(at, i - at);
      const std::string up = py_upper(ch);
      out += up != ch ? up : py_lower(ch);
    }
    return Value(out);
  }
  if (m == "find" || m == "rfind" || m == "index" || m == "rindex") {
    const std::int64_t r = py_index_of(s, a.str(0, "sub"), m == "rfind" || m == "rindex");
    if (r < 0 && (m == "index" || m == "rindex")) in.fail(a.line, "substring not found");
    return Value(r);
  }
  if (m == "count") {
    const std::string sub = a.str(0, "sub");
    if (sub.empty()) return Value(static_cast<std::int64_t>(py_len(s) + 1));
    std::int64_t n = 0;
    for (std::size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
    return Value(n);
  }
  if (m == "join") {
    const Value* it = a.get(0, "iterable");
    if (!it) in.fail(a.line, "join() takes one argument");
    std::string out;
    bool first = true;
    for (const Value& x : in.iterate(*it, a.line)) {
      if (!first) out += s;
      first = false;
      out += need_str(in, x, a.line, "join");
    }
    return Value(out);
  }
  if (m.rfind("is", 0) == 0) return Value(py_is(s, m.c_str()));
  if (m == "splitlines") return str_list(py_splitlines(s, a.flag(0, "keepends", false)));
  if (m == "removeprefix") {
    const std::string p = a.str(0, "prefix");
    return Value(s.compare(0, p.size(), p) == 0 && s.size() >= p.size() ? s.substr(p.size()) : s);
  }
  if (m == "removesuffix") {
    const std::string p = a.str(0, "suffix");
    return Value(!p.empty() && s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0 ? s.substr(0, s.size() - p.size()) : s);
  }
  if (m == "zfill" || m == "center" || m == "ljust" || m == "rjust") {
    const std::int64_t width = a.integer(0, "width", 0);
    const std::int64_t len = static_cast<std::int64_t>(py_len(s));
    if (width <= len) return Value(s);
    const auto pad = static_cast<std::size_t>(width - len);
    if (m == "zfill") {
      if (!s.empty() && (s[0] == '-' || s[0] == '+')) return Value(s.substr(0, 1) + std::string(pad, '0') + s.substr(1));
      return Value(std::string(pad, '0') + s);
    }
    const std::string fill = a.opt_str(1, "fillchar").value_or(" ");
    std::string left, right;
    std::size_t nl = m == "rjust" ? pad : m == "ljust" ? 0 : pad / 2 + (pad & static_cast<std::size_t>(width) & 1);
    for (std::size_t k = 0; k < nl; ++k) left += fill;
    for (std::size_t k = 0; k < pad - nl; ++k) right += fill;
    return Value(left + s + right);
  }
  if (m == "format") {
    // str.format with positional {} / {0} and keyword {name} fields (no format specs).
    std::string out;
    std::size_t auto_idx = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '{' && i + 1 < s.size() && s[i + 1] == '{') {
        out += '{';
        ++i;
      } else if (s[i] == '}' && i + 1 < s.size() && s[i + 1] == '}') {
        out += '}';
        ++i;
      } else if (s[i] == '{') {
        const std::size_t close = s.find('}', i);
        if (close == std::string::npos) in.fail(a.line, "format(): single '{' in format string");
        const std::string field = s.substr(i + 1, close - i - 1);
        if (field.find_first_of(":!") != std::string::npos) in.fail(a.line, "format(): format specs are not supported");
        const Value* v = nullptr;
        if (field.empty()) v = auto_idx < a.args.size() ? &a.args[auto_idx++] : nullptr;
        else if (field.find_first_not_of("0123456789") == std::string::npos) {
          const std::size_t k = std::stoul(field);
          v = k < a.args.size() ? &a.args[k] : nullptr;
        } else {
          for (auto& [k, x] : a.kwargs)
            if (k == field) v = &x;
        }
        if (!v) in.fail(a.line, "format(): no argument for field {" + field + "}");
        out += v->to_str();
        i = close;
      } else {
        out += s[i];
      }
    }
    return Value(out);
  }
  in.fail(a.line, "str." + m + "() is not supported");
}

Value BoundMethod::call(Interpreter& in, ValueList& args, Kwargs& kwargs) {
  const int line = in.call_line();
  Args a{in, args, kwargs, line, name};
  if (self.is_string()) return str_method(in, self.str(), name, a);
  if (self.is_dict()) {
    const Dict& d = self.dict_ref();
    if (name == "items") {
      ValueList out;
      for (const auto& [k, v] : d.entries) out.push_back(Value::list({k, v}, true));
      return Value::list(std::move(out));
    }
    if (name == "keys" || name == "values") {
      ValueList out;
      for (const auto& [k, v] : d.entries) out.push_back(name == "keys" ? k : v);
      return Value::list(std::move(out));
    }
    if (name == "get") {
      const Value* key = a.get(0, "key");
      if (!key) in.fail(line, "dict.get() takes at least 1 argument");
      const Value* v = d.find(*key);
      return v ? *v : a.value(1, "default", Value::none());
    }
    if (name == "copy") {
      auto c = std::make_shared<Dict>(d);
      c->is_namespace = false;
      return Value::dict(std::move(c));
    }
  }
  if (self.is_list()) {
    if (name == "copy") return Value::list(self.items());
    const Value* x = a.get(0, "value");
    if (!x) in.fail(line, "list." + name + "() takes one argument");
    std::int64_t count = 0;
    for (std::size_t i = 0; i < self.items().size(); ++i) {
      if (!equals(self.items()[i], *x)) continue;
      if (name == "index") return Value(static_cast<std::int64_t>(i));
      ++count;
    }
    if (name == "index") in.fail(line, "list.index(x): x not in list");
    return Value(count);
  }
  in.fail(line, "method " + name + " is not supported on " + self.type_name());
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Jinja's attribute path for map/sort/selectattr: "a.b.0".
Value resolve_path(Interpreter& in, Value v, const std::string& path, int line) {
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos)
      v = in.get_item(v, Value(static_cast<std::int64_t>(std::stoll(part))), line);
    else
      v = in.get_attr(v, part, line);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return v;
}

Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(py_lower(v.str()));
  return v;
}

}  // namespace

Value Interpreter::get_attr(const Value& obj, const std::string& name, int line) {
  switch (obj.type()) {
    case Value::Type::Undefined: undefined_error(*this, obj, line);
    case Value::Type::Dict: {
      const Dict& d = obj.dict_ref();
      if (d.is_namespace) {
        const Value* v = d.find_str(name);
        return v ? *v : Value::undefined(name);
      }
      if (kDictMethods.count(name)) return bind(obj, name);
      if (kDictUnsafe.count(name)) fail(line, "access to attribute '" + name + "' of 'dict' object is unsafe");
      const Value* v = d.find_str(name);
      return v ? *v : Value::undefined(name);
    }
    case Value::Type::String:
      if (kStrMethods.count(name)) return bind(obj, name);
      return Value::undefined(name);
    case Value::Type::List:
      if (kListMethods.count(name)) return bind(obj, name);
      if (kListUnsafe.count(name)) fail(line, "access to attribute '" + name + "' of 'list' object is unsafe");
      return Value::undefined(name);
    default: return Value::undefined(name);
  }
}

Value Interpreter::get_item(const Value& obj, const Value& key, int line) {
  switch (obj.type()) {
    case Value::Type::Undefined: undefined_error(*this, obj, line);
    case Value::Type::Dict: {
      if (const Value* v = obj.dict_ref().find(key)) return *v;
      if (key.is_string()) return get_attr(obj, key.str(), line);
      return Value::undefined(key.to_str());
    }
    case Value::Type::List: {
      if (key.is_int() || key.is_bool()) {
        const auto n = static_cast<std::int64_t>(obj.items().size());
        std::int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined("[" + std::to_string(key.as_int()) + "]");
        return obj.items()[static_cast<std::size_t>(i)];
      }
      if (key.is_string()) return get_attr(obj, key.str(), line);
      return Value::undefined(key.to_str());
    }
    case Value::Type::String: {
      if (key.is_int() || key.is_bool()) {
        const std::string& s = obj.str();
        std::vector<std::size_t> starts;
        for (std::size_t i = 0; i < s.size(); ++i)
          if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
        const auto n = static_cast<std::int64_t>(starts.size());
        std::int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined("[" + std::to_string(key.as_int()) + "]");
        const std::size_t b = starts[static_cast<std::size_t>(i)];
        const std::size_t e = static_cast<std::size_t>(i + 1) < starts.size() ? starts[static_cast<std::size_t>(i + 1)] : s.size();
        return Value(s.substr(b, e - b));
      }
      if (key.is_string()) return get_attr(obj, key.str(), line);
      return Value::undefined(key.to_str());
    }
    default: return Value::undefined(key.to_str());
  }
}

bool Interpreter::apply_test(const std::string& name, const Value& v, ValueList& args, int line) {
  const auto arg = [&](std::size_t i) -> const Value& {
    if (i >= args.size()) fail(line, "test '" + name + "' needs an argument");
    return args[i];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
  if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "callable") return v.is_callable();
  if (name == "escaped") return false;
  if (name == "sameas") {
    const Value& o = arg(0);
    if (v.is_none() || o.is_none() || v.is_bool() || o.is_bool()) return v.type() == o.type() && equals(v, o);
    return equals(v, o) && v.type() == o.type();
  }
  if (name == "eq" || name == "equalto" || name == "==") return equals(v, arg(0));
  if (name == "ne" || name == "!=") return !equals(v, arg(0));
  if (name == "lt" || name == "lessthan" || name == "<") return compare("<", v, arg(0), line);
  if (name == "le" || name == "<=") return compare("<=", v, arg(0), line);
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(">", v, arg(0), line);
  if (name == "ge" || name == ">=") return compare(">=", v, arg(0), line);
  if (name == "in") return compare("in", v, arg(0), line);
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (v.is_undefined()) undefined_error(*this, v, line);
    if (!v.is_int() && !v.is_bool()) fail(line, "test '" + name + "' needs an integer");
    if (name == "odd") return v.as_int() % 2 != 0;
    if (name == "even") return v.as_int() % 2 == 0;
    const Value& d = arg(0);
    if (!d.is_int() || d.as_int() == 0) fail(line, "divisibleby needs a non-zero integer");
    return v.as_int() % d.as_int() == 0;
  }
  if (name == "lower" || name == "upper") return v.is_string() && py_is(v.str(), name == "lower" ? "islower" : "isupper");
  fail(line, "no test named '" + name + "'");
}

Value Interpreter::apply_filter(const std::string& name, Value v, ValueList& args, Kwargs& kwargs, int line) {
  Args a{*this, args, kwargs, line, name};
  if (name == "default" || name == "d") {
    const bool boolean = a.flag(1, "boolean", false);
    if (v.is_undefined() || (boolean && !v.truthy())) return a.value(0, "default_value", Value(""));
    return v;
  }
  if (name == "safe") return v;
  if (name == "string") return Value(v.to_str());
  if (name == "pprint") return Value(v.repr());
  if (name == "tojson") {
    JsonDumpOptions o;
    const Value* indent = a.get(0, "indent");
    if (indent && !indent->is_none()) {
      if (!indent->is_int()) fail(line, "tojson: indent must be an integer");
      o.indent = static_cast<int>(indent->as_int());
      o.item_separator = ",";
    }
    o.ensure_ascii = a.flag(1, "ensure_ascii", false);
    if (const Value* sep = a.get(2, "separators"); sep && !sep->is_none()) {
      if (!sep->is_list() || sep->items().size() != 2 || !sep->items()[0].is_string() || !sep->items()[1].is_string())
        fail(line, "tojson: separators must be a pair of strings");
      o.item_separator = sep->items()[0].str();
      o.key_separator = sep->items()[1].str();
    }
    o.sort_keys = a.flag(3, "sort_keys", false);
    try {
      return Value(json_dumps(v, o));
    } catch (const Error& e) {
      fail(line, std::string(e.what()).substr(std::string("chat template: ").size()));
    }
  }
  if (name == "length" || name == "count") {
    switch (v.type()) {
      case Value::Type::Undefined: return Value(0);
      case Value::Type::String: return Value(static_cast<std::int64_t>(py_len(v.str())));
      case Value::Type::List: return Value(static_cast<std::int64_t>(v.items().size()));
      case Value::Type::Dict: return Value(static_cast<std::int64_t>(v.dict_ref().entries.size()));
      default: fail(line, "object of type '" + v.type_name() + "' has no len()");
    }
  }
  if (name == "trim") return Value(py_strip(v.to_str(), a.opt_str(0, "chars"), true, true));
  if (name == "upper") return Value(py_upper(v.to_str()));
  if (name == "lower") return Value(py_lower(v.to_str()));
  if (name == "capitalize") return Value(py_capitalize(v.to_str()));
  if (name == "title") {
    // Jinja: words begin after runs of - whitespace ( { [ <.
    const std::string s = v.to_str();
    std::string out;
    bool at_start = true;
    std::size_t i = 0;
    while (i < s.size()) {
      const std::size_t at = i;
      const char32_t c = tok::next_codepoint(s, i);
      const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py_isspace(c);
      const std::string ch = s.substr(at, i - at);
      if (sep) {
        out += ch;
        at_start = true;
      } else {
        out += at_start ? py_upper(ch) : py_lower(ch);
        at_start = false;
      }
    }
    return Value(out);
  }
  if (name == "replace") {
    if (v.is_undefined()) undefined_error(*this, v, line);
    return Value(py_replace(v.to_str(), a.str(0, "old"), a.str(1, "new"), static_cast<long>(a.integer(2, "count", -1))));
  }
  if (name == "escape" || name == "e" || name == "forceescape") return Value(html_escape(v.to_str()));
  if (name == "indent") {
    const Value* w = a.get(0, "width");
    const std::string ind = w && w->is_string() ? w->str() : std::string(static_cast<std::size_t>(w ? std::max<std::int64_t>(0, w->as_int()) : 4), ' ');
    const bool first = a.flag(1, "first", false), blank = a.flag(2, "blank", false);
    std::vector<std::string> lines = py_splitlines(v.to_str() + "\n", false);
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) out += "\n";
      if (i && (blank || !lines[i].empty())) out += ind;
      out += lines[i];
    }
    return Value(first ? ind + out : out);
  }
  if (name == "wordcount") {
    std::int64_t n = 0;
    bool in_word = false;
    const std::string s = v.to_str();
    for (const char c : s) {
      const bool w = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
      if (w && !in_word) ++n;
      in_word = w;
    }
    return Value(n);
  }
  if (name == "center") return str_method(*this, v.to_str(), "center", Args{*this, args, kwargs, line, name});
  if (name == "int") {
    const std::int64_t def = a.integer(0, "default", 0);
    if (v.is_int() || v.is_bool()) return Value(v.as_int());
    if (v.is_float()) return Value(static_cast<std::int64_t>(v.as_double()));
    if (v.is_string()) {
      const std::string s = py_strip(v.str(), std::nullopt, true, true);
      char* end = nullptr;
      errno = 0;
      const long long x = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && *end == 0 && errno == 0) return Value(static_cast<std::int64_t>(x));
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && *end == 0 && std::isfinite(d)) return Value(static_cast<std::int64_t>(d));
    }
    return Value(def);
  }
  if (name == "float") {
    if (v.is_number()) return Value(v.as_double());
    if (v.is_string()) {
      const std::string s = py_strip(v.str(), std::nullopt, true, true);
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && *end == 0) return Value(d);
    }
    const Value* def = a.get(0, "default");
    return def ? Value(def->as_double()) : Value(0.0);
  }
  if (name == "abs") {
    if (!v.is_number()) fail(line, "bad operand type for abs(): '" + v.type_name() + "'");
    return v.is_float() ? Value(std::fabs(v.as_double())) : Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  if (name == "round") {
    const std::int64_t precision = a.integer(0, "precision", 0);
    const std::string method = a.opt_str(1, "method").value_or("common");
    if (!v.is_number()) fail(line, "round: expected a number");
    const double scale = std::pow(10.0, static_cast<double>(precision));
    double x = v.as_double() * scale;
    if (method == "common") x = std::nearbyint(x);
    else if (method == "ceil") x = std::ceil(x);
    else if (method == "floor") x = std::floor(x);
    else fail(line, "round: method must be common, ceil or floor");
    if (v.is_int() && method == "common") return Value(static_cast<std::int64_t>(x / scale));
    return Value(x / scale);
  }
  if (name == "first" || name == "last") {
    const ValueList items = iterate(v, line);
    if (items.empty()) return Value::undefined(name);
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value::list(iterate(v, line));
  if (name == "reverse") {
    if (v.is_string()) {
      ValueList chars = iterate(v, line);
      std::string out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += it->str();
      return Value(out);
    }
    ValueList items = iterate(v, line);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "join") {
    const std::string sep = a.opt_str(0, "d").value_or("");
    const std::optional<std::string> attr = a.opt_str(1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& x : iterate(v, line)) {
      if (!first) out += sep;
      first = false;
      out += (attr ? resolve_path(*this, x, *attr, line) : x).to_str();
    }
    return Value(out);
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict()) fail(line, "items: expected a mapping, got " + v.type_name());
    ValueList out;
    for (const auto& [k, x] : v.dict_ref().entries) out.push_back(Value::list({k, x}, true));
    return Value::list(std::move(out));
  }
  if (name == "dictsort") {
    if (!v.is_dict()) fail(line, "dictsort: expected a mapping");
    const bool cs = a.flag(0, "case_sensitive", false);
    const std::string by = a.opt_str(1, "by").value_or("key");
    const bool rev = a.flag(2, "reverse", false);
    ValueList out;
    for (const auto& [k, x] : v.dict_ref().entries) out.push_back(Value::list({k, x}, true));
    const std::size_t pos = by == "value" ? 1 : 0;
    std::stable_sort(out.begin(), out.end(), [&](const Value& p, const Value& q) {
      const bool lt = less(sort_key(p.items()[pos], cs), sort_key(q.items()[pos], cs));
      const bool gt = less(sort_key(q.items()[pos], cs), sort_key(p.items()[pos], cs));
      return rev ? gt : lt;
    });
    return Value::list(std::move(out));
  }
  if (name == "sort" || name == "unique" || name == "max" || name == "min") {
    const bool rev = name == "sort" && a.flag(0, "reverse", false);
    const bool cs = a.flag(name == "sort" ? 1 : 0, "case_sensitive", false);
    const std::optional<std::string> attr = a.opt_str(name == "sort" ? 2 : 1, "attribute");
    ValueList items = iterate(v, line);
    const auto key = [&](const Value& x) { return sort_key(attr ? resolve_path(*this, x, *attr, line) : x, cs); };
    try {
      if (name == "unique") {
        ValueList out, seen;
        for (const Value& x : items) {
          const Value k = key(x);
          bool dup = false;
          for (const Value& s : seen) dup = dup || equals(s, k);
          if (!dup) {
            seen.push_back(k);
            out.push_back(x);
          }
        }
        return Value::list(std::move(out));
      }
      if (name == "max" || name == "min") {
        if (items.empty()) return Value::undefined(name);
        std::size_t best = 0;
        for (std::size_t i = 1; i < items.size(); ++i) {
          const bool better = name == "max" ? less(key(items[best]), key(items[i])) : less(key(items[i]), key(items[best]));
          if (better) best = i;
        }
        return items[best];
      }
      std::stable_sort(items.begin(), items.end(), [&](const Value& p, const Value& q) {
        return rev ? less(key(q), key(p)) : less(key(p), key(q));
      });
    } catch (const Error& e) {
      const std::string msg = e.what();
      if (msg.rfind("chat template line", 0) == 0) throw;
      fail(line, msg.substr(std::string("chat template: ").size()));
    }
    return Value::list(std::move(items));
  }
  if (name == "sum") {
    const std::optional<std::string> attr = a.opt_str(0, "attribute");
    Value total = a.value(1, "start", Value(0));
    for (const Value& x : iterate(v, line)) total = binary("+", total, attr ? resolve_path(*this, x, *attr, line) : x, line);
    return total;
  }
  if (name == "map") {
    ValueList out;
    const std::optional<std::string> attr = [&]() -> std::optional<std::string> {
      for (auto& [k, x] : kwargs)
        if (k == "attribute") return x.to_str();
      return std::nullopt;
    }();
    if (attr) {
      const Value* def = nullptr;
      for (auto& [k, x] : kwargs)
        if (k == "default") def = &x;
      for (const Value& x : iterate(v, line)) {
        Value r = resolve_path(*this, x, *attr, line);
        out.push_back(r.is_undefined() && def ? *def : r);
      }
      return Value::list(std::move(out));
    }
    if (args.empty() || !args[0].is_string()) fail(line, "map: give a filter name or attribute=");
    const std::string filter = args[0].str();
    ValueList rest(args.begin() + 1, args.end());
    for (const Value& x : iterate(v, line)) {
      ValueList fa = rest;
      Kwargs fk = kwargs;
      out.push_back(apply_filter(filter, x, fa, fk, line));
    }
    return Value::list(std::move(out));
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    const bool by_attr = name == "selectattr" || name == "rejectattr";
    const bool keep_if = name == "select" || name == "selectattr";
    std::size_t p = 0;
    std::string attr;
    if (by_attr) {
      if (args.empty() || !args[0].is_string()) fail(line, name + ": give an attribute name");
      attr = args[0].str();
      p = 1;
    }
    std::optional<std::string> test;
    if (args.size() > p) {
      if (!args[p].is_string()) fail(line, name + ": the test name must be a string");
      test = args[p].str();
    }
    ValueList rest(args.begin() + static_cast<std::ptrdiff_t>(std::min(args.size(), p + 1)), args.end());
    ValueList out;
    for (const Value& x : iterate(v, line)) {
      const Value subject = by_attr ? resolve_path(*this, x, attr, line) : x;
      ValueList ta = rest;
      const bool r = test ? apply_test(*test, subject, ta, line) : subject.truthy();
      if (r == keep_if) out.push_back(x);
    }
    return Value::list(std::move(out));
  }
  if (name == "attr") return get_attr(v, a.str(0, "name"), line);
  if (name == "batch") {
    const std::int64_t n = a.integer(0, "linecount", 1);
    if (n <= 0) fail(line, "batch: linecount must be positive");
    ValueList out, cur;
    for (const Value& x : iterate(v, line)) {
      cur.push_back(x);
      if (static_cast<std::int64_t>(cur.size()) == n) {
        out.push_back(Value::list(std::move(cur)));
        cur.clear();
      }
    }
    if (!cur.empty()) {
      if (const Value* fill = a.get(1, "fill_with"); fill && !fill->is_none())
        while (static_cast<std::int64_t>(cur.size()) < n) cur.push_back(*fill);
      out.push_back(Value::list(std::move(cur)));
    }
    return Value::list(std::move(out));
  }
  if (name == "format") {
    // printf-style: %s %d %i %f %r %%.
    const std::string f = v.to_str();
    std::string out;
    std::size_t k = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '%' || i + 1 >= f.size()) {
        out += f[i];
        continue;
      }
      const char c = f[++i];
      if (c == '%') {
        out += '%';
        continue;
      }
      if (k >= args.size()) fail(line, "format: not enough arguments for format string");
      const Value& x = args[k++];
      if (c == 's') out += x.to_str();
      else if (c == 'r') out += x.repr();
      else if (c == 'd' || c == 'i') out += std::to_string(x.as_int());
      else if (c == 'f') {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%f", x.as_double());
        out += buf;
      } else fail(line, std::string("format: unsupported conversion %") + c);
    }
    return Value(out);
  }
  fail(line, "no filter named '" + name + "'");
}

}  // namespace kvgate::jinja

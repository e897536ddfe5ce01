#include "harness/tokenizer/jinja/interpreter.h"

#include <cmath>

#include "harness/core/error.h"
#include "harness/tokenizer/jinja/parser.h"
#include "harness/tokenizer/jinja/template.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::jinja {

namespace {
constexpr int kMaxCallDepth = 200;
constexpr std::int64_t kMaxRange = 100000;  // Jinja's sandbox limit
constexpr std::size_t kMaxRepeat = std::size_t{1} << 27;
constexpr std::uint64_t kMaxSteps = 20'000'000;  // far beyond any chat template; stops runaway loops

struct NativeCallable final : Callable {
  NativeFunction fn;
  Value call(Interpreter&, ValueList& args, Kwargs& kwargs) override { return fn(args, kwargs); }
};

struct MacroCallable final : Callable {
  const Stmt* macro = nullptr;
  Value call(Interpreter& in, ValueList& args, Kwargs& kwargs) override {
    Frame frame;
    frame.parent = in.root();
    const auto& params = macro->params;
    if (args.size() > params.size())
      in.fail(macro->line, "macro '" + name + "' takes " + std::to_string(params.size()) + " arguments, got " +
                               std::to_string(args.size()));
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (i < args.size()) {
        frame.vars[params[i].first] = args[i];
        continue;
      }
      bool found = false;
      for (auto& [k, v] : kwargs)
        if (k == params[i].first) {
          frame.vars[k] = v;
          found = true;
        }
      if (!found) frame.vars[params[i].first] = params[i].second ? in.eval(*params[i].second, frame) : Value::undefined(params[i].first);
    }
    for (auto& [k, v] : kwargs) {
      bool known = false;
      for (const auto& p : params) known = known || p.first == k;
      if (!known) in.fail(macro->line, "macro '" + name + "' takes no keyword argument '" + k + "'");
    }
    std::string out;
    in.exec_body(macro->body, frame, out);
    return Value(std::move(out));
  }
};

Value make_native(const std::string& name, NativeFunction fn) {
  auto c = std::make_shared<NativeCallable>();
  c->name = name;
  c->fn = std::move(fn);
  return Value::callable(std::move(c));
}

std::int64_t py_floordiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t py_mod(std::int64_t a, std::int64_t b) {
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double py_fmod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Code points of a string, for indexing and slicing by character as Python does.
std::vector<std::pair<std::size_t, std::size_t>> char_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t at = i;
    i += tok::utf8_seq_len(static_cast<unsigned char>(s[i]));
    if (i > s.size()) i = s.size();
    spans.emplace_back(at, i - at);
  }
  return spans;
}
}  // namespace

[[noreturn]] void undefined_error(const Interpreter& in, const Value& v, int line) {
  const std::string& hint = v.undefined_hint();
  in.fail(line, hint.empty() ? "value is undefined" : "'" + hint + "' is undefined");
}

void Interpreter::fail(int line, const std::string& msg) const {
  throw Error("chat template line " + std::to_string(line) + ": " + msg);
}

void Interpreter::exec_body(const Body& body, Frame& frame, std::string& out) {
  if (++depth_ > kMaxCallDepth) {
    --depth_;
    fail(body.empty() ? 0 : body.front()->line, "recursion too deep");
  }
  try {
    const Flow f = exec(body, frame, out);
    (void)f;
  } catch (...) {
    --depth_;
    throw;
  }
  --depth_;
}

Interpreter::Flow Interpreter::exec(const Body& body, Frame& frame, std::string& out) {
  for (const StmtPtr& sp : body) {
    const Stmt& s = *sp;
    if (++steps_ > kMaxSteps) fail(s.line, "the template ran more than 20 million steps: it does not terminate in reasonable time");
    switch (s.kind) {
      case Stmt::Kind::Text: out += s.text; break;
      case Stmt::Kind::Print: {
        const Value v = eval(*s.expr, frame);
        if (v.is_string()) out += v.str();
        else out += v.to_str();
        break;
      }
      case Stmt::Kind::If: {
        bool taken = false;
        for (const auto& [test, b] : s.branches) {
          if (eval(*test, frame).truthy()) {
            taken = true;
            const Flow f = exec(b, frame, out);
            if (f != Flow::Normal) return f;
            break;
          }
        }
        if (!taken) {
          const Flow f = exec(s.else_body, frame, out);
          if (f != Flow::Normal) return f;
        }
        break;
      }
      case Stmt::Kind::For: {
        const Flow f = exec_for(s, frame, out);
        (void)f;
        break;
      }
      case Stmt::Kind::Set: assign(s.target, eval(*s.expr, frame), frame, s.line); break;
      case Stmt::Kind::SetBlock: {
        std::string captured;
        exec(s.body, frame, captured);
        Value v(std::move(captured));
        if (s.filter) {
          // The chain's innermost input is the captured text.
          std::vector<const Expr*> chain;
          for (const Expr* f = s.filter.get(); f; f = f->children[0].get()) chain.push_back(f);
          for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            ValueList args;
            Kwargs kwargs;
            for (std::size_t i = 1; i < (*it)->children.size(); ++i) args.push_back(eval(*(*it)->children[i], frame));
            for (const auto& [k, e] : (*it)->kwargs) kwargs.emplace_back(k, eval(*e, frame));
            v = apply_filter((*it)->name, v, args, kwargs, (*it)->line);
          }
        }
        assign(s.target, std::move(v), frame, s.line);
        break;
      }
      case Stmt::Kind::Macro: {
        auto m = std::make_shared<MacroCallable>();
        m->name = s.text;
        m->macro = &s;
        frame.vars[s.text] = Value::callable(std::move(m));
        break;
      }
      case Stmt::Kind::Break: return Flow::Break;
      case Stmt::Kind::Continue: return Flow::Continue;
      case Stmt::Kind::FilterBlock: {
        std::string captured;
        exec(s.body, frame, captured);
        Value v(std::move(captured));
        std::vector<const Expr*> chain;
        for (const Expr* f = s.filter.get(); f; f = f->children[0].get()) chain.push_back(f);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
          ValueList args;
          Kwargs kwargs;
          for (std::size_t i = 1; i < (*it)->children.size(); ++i) args.push_back(eval(*(*it)->children[i], frame));
          for (const auto& [k, e] : (*it)->kwargs) kwargs.emplace_back(k, eval(*e, frame));
          v = apply_filter((*it)->name, v, args, kwargs, (*it)->line);
        }
        out += v.to_str();
        break;
      }
      case Stmt::Kind::Generation: {
        const Flow f = exec(s.body, frame, out);
        if (f != Flow::Normal) return f;
        break;
      }
    }
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_for(const Stmt& s, Frame& frame, std::string& out) {
  const Value seq = eval(*s.expr, frame);
  ValueList items = iterate(seq, s.line);
  auto bind = [&](Frame& f, const Value& item) {
    if (s.target.names.size() == 1 && !s.target.tuple) {
      f.vars[s.target.names[0]] = item;
      return;
    }
    const ValueList parts = iterate(item, s.line);
    if (parts.size() != s.target.names.size())
      fail(s.line, "cannot unpack " + std::to_string(parts.size()) + " values into " +
                       std::to_string(s.target.names.size()) + " loop variables");
    for (std::size_t i = 0; i < parts.size(); ++i) f.vars[s.target.names[i]] = parts[i];
  };
  if (s.filter) {
    ValueList kept;
    for (const Value& item : items) {
      Frame f;
      f.parent = &frame;
      bind(f, item);
      if (eval(*s.filter, f).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec(s.else_body, frame, out);
    return Flow::Normal;
  }
  const auto n = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < n; ++i) {
    Frame f;
    f.parent = &frame;
    bind(f, items[static_cast<std::size_t>(i)]);
    auto loop = std::make_shared<Dict>();
    loop->entries.reserve(12);
    loop->entries.emplace_back(Value("index0"), Value(i));
    loop->entries.emplace_back(Value("index"), Value(i + 1));
    loop->entries.emplace_back(Value("revindex0"), Value(n - i - 1));
    loop->entries.emplace_back(Value("revindex"), Value(n - i));
    loop->entries.emplace_back(Value("first"), Value(i == 0));
    loop->entries.emplace_back(Value("last"), Value(i == n - 1));
    loop->entries.emplace_back(Value("length"), Value(n));
    loop->entries.emplace_back(Value("depth"), Value(1));
    loop->entries.emplace_back(Value("depth0"), Value(0));
    loop->entries.emplace_back(Value("previtem"), i > 0 ? items[static_cast<std::size_t>(i - 1)] : Value::undefined("loop.previtem"));
    loop->entries.emplace_back(Value("nextitem"), i + 1 < n ? items[static_cast<std::size_t>(i + 1)] : Value::undefined("loop.nextitem"));
    loop->entries.emplace_back(Value("cycle"), make_native("loop.cycle", [i, line = s.line, this](ValueList& args, Kwargs&) -> Value {
      if (args.empty()) fail(line, "loop.cycle() needs at least one argument");
      return args[static_cast<std::size_t>(i) % args.size()];
    }));
    f.vars["loop"] = Value::dict(std::move(loop));
    const Flow fl = exec(s.body, f, out);
    if (fl == Flow::Break) break;
  }
  return Flow::Normal;
}

void Interpreter::assign(const Target& t, Value v, Frame& frame, int line) {
  if (!t.ns_attr.empty()) {
    const Value* ns = frame.lookup(t.names[0]);
    if (!ns || !ns->is_dict() || !ns->dict_ref().is_namespace)
      fail(line, "cannot assign attribute '" + t.ns_attr + "' on '" + t.names[0] + "': it is not a namespace");
    ns->dict_ref().set(Value(t.ns_attr), std::move(v));
    return;
  }
  if (t.names.size() == 1 && !t.tuple) {
    frame.vars[t.names[0]] = std::move(v);
    return;
  }
  const ValueList parts = iterate(v, line);
  if (parts.size() != t.names.size())
    fail(line, "cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(t.names.size()) + " names");
  for (std::size_t i = 0; i < parts.size(); ++i) frame.vars[t.names[i]] = parts[i];
}

ValueList Interpreter::iterate(const Value& v, int line) {
  switch (v.type()) {
    case Value::Type::Undefined: return {};
    case Value::Type::List: return v.items();
    case Value::Type::Dict: {
      if (v.dict_ref().is_namespace) fail(line, "'Namespace' object is not iterable");
      ValueList keys;
      for (const auto& [k, val] : v.dict_ref().entries) keys.push_back(k);
      return keys;
    }
    case Value::Type::String: {
      ValueList chars;
      for (const auto& [at, len] : char_spans(v.str())) chars.emplace_back(v.str().substr(at, len));
      return chars;
    }
    default: fail(line, "'" + v.type_name() + "' object is not iterable");
  }
}

Value Interpreter::call(const Value& fn, ValueList& args, Kwargs& kwargs, int line) {
  if (fn.is_undefined()) undefined_error(*this, fn, line);
  if (!fn.is_callable()) fail(line, "'" + fn.type_name() + "' object is not callable");
  call_line_ = line;
  if (++depth_ > kMaxCallDepth) {
    --depth_;
    fail(line, "recursion too deep");
  }
  try {
    Value r = fn.fn().call(*this, args, kwargs);
    --depth_;
    return r;
  } catch (...) {
    --depth_;
    throw;
  }
}

Value Interpreter::binary(const std::string& op, const Value& a, const Value& b, int line) {
  if (op == "~") return Value(a.to_str() + b.to_str());
  if (a.is_undefined()) undefined_error(*this, a, line);
  if (b.is_undefined()) undefined_error(*this, b, line);
  const auto type_error = [&]() -> Value {
    fail(line, "unsupported operand types for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
  };
  if (a.is_number() && b.is_number()) {
    const bool fl = a.is_float() || b.is_float();
    if (op == "+") return fl ? Value(a.as_double() + b.as_double()) : Value(a.as_int() + b.as_int());
    if (op == "-") return fl ? Value(a.as_double() - b.as_double()) : Value(a.as_int() - b.as_int());
    if (op == "*") return fl ? Value(a.as_double() * b.as_double()) : Value(a.as_int() * b.as_int());
    if (op == "/") {
      if (b.as_double() == 0) fail(line, "division by zero");
      return Value(a.as_double() / b.as_double());
    }
    if (op == "//") {
      if (b.as_double() == 0) fail(line, "integer division or modulo by zero");
      return fl ? Value(std::floor(a.as_double() / b.as_double())) : Value(py_floordiv(a.as_int(), b.as_int()));
    }
    if (op == "%") {
      if (b.as_double() == 0) fail(line, "integer division or modulo by zero");
      return fl ? Value(py_fmod(a.as_double(), b.as_double())) : Value(py_mod(a.as_int(), b.as_int()));
    }
    if (op == "**") {
      if (!fl && b.as_int() >= 0) {
        std::int64_t r = 1;
        for (std::int64_t k = 0; k < b.as_int() && k < 64; ++k) r *= a.as_int();
        return Value(r);
      }
      return Value(std::pow(a.as_double(), b.as_double()));
    }
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      std::string r;
      r.reserve(a.str().size() + b.str().size());
      r += a.str();
      r += b.str();
      return Value(std::move(r));
    }
    if (a.is_list() && b.is_list()) {
      ValueList r = a.items();
      r.insert(r.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(r), a.is_tuple());
    }
  }
  if (op == "*") {
    const Value* seq = a.is_string() || a.is_list() ? &a : b.is_string() || b.is_list() ? &b : nullptr;
    const Value* count = seq == &a ? &b : &a;
    if (seq && (count->is_int() || count->is_bool())) {
      const std::int64_t k = std::max<std::int64_t>(0, count->as_int());
      if (seq->is_string()) {
        if (seq->str().size() * static_cast<std::size_t>(k) > kMaxRepeat) fail(line, "string repetition too large");
        std::string r;
        for (std::int64_t i = 0; i < k; ++i) r += seq->str();
        return Value(std::move(r));
      }
      if (seq->items().size() * static_cast<std::size_t>(k) > kMaxRepeat) fail(line, "list repetition too large");
      ValueList r;
      for (std::int64_t i = 0; i < k; ++i) r.insert(r.end(), seq->items().begin(), seq->items().end());
      return Value::list(std::move(r), seq->is_tuple());
    }
  }
  if (op == "%" && a.is_string()) fail(line, "printf-style '%' formatting of strings is not supported; use ~ or format");
  return type_error();
}

bool Interpreter::compare(const std::string& op, const Value& a, const Value& b, int line) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in" || op == "notin") {
    bool found = false;
    if (b.is_string()) {
      if (!a.is_string()) fail(line, "'in <string>' requires string as left operand, not " + a.type_name());
      found = b.str().find(a.str()) != std::string::npos;
    } else if (b.is_list()) {
      for (const Value& x : b.items()) found = found || equals(x, a);
    } else if (b.is_dict()) {
      found = b.dict_ref().find(a) != nullptr;
    } else if (b.is_undefined()) {
      found = false;
    } else {
      fail(line, "argument of type '" + b.type_name() + "' is not iterable");
    }
    return op == "in" ? found : !found;
  }
  if (a.is_undefined()) undefined_error(*this, a, line);
  if (b.is_undefined()) undefined_error(*this, b, line);
  try {
    if (op == "<") return less(a, b);
    if (op == ">") return less(b, a);
    if (op == "<=") return !less(b, a);
    if (op == ">=") return !less(a, b);
  } catch (const Error& e) {
    fail(line, std::string(e.what()).substr(std::string("chat template: ").size()));
  }
  fail(line, "unknown comparison " + op);
}

Value Interpreter::slice(const Value& obj, const Value& start, const Value& stop, const Value& step, int line) {
  if (obj.is_undefined()) undefined_error(*this, obj, line);
  const auto opt_int = [&](const Value& v, const char* what) -> std::optional<std::int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) fail(line, std::string("slice ") + what + " must be an integer");
    return v.as_int();
  };
  const std::int64_t st = opt_int(step, "step").value_or(1);
  if (st == 0) fail(line, "slice step cannot be zero");
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::int64_t len = 0;
  if (obj.is_string()) {
    spans = char_spans(obj.str());
    len = static_cast<std::int64_t>(spans.size());
  } else if (obj.is_list()) {
    len = static_cast<std::int64_t>(obj.items().size());
  } else {
    fail(line, "'" + obj.type_name() + "' object is not subscriptable");
  }
  // Python's slice.indices().
  const auto clamp = [&](std::optional<std::int64_t> v, std::int64_t def) {
    if (!v) return def;
    std::int64_t x = *v;
    if (x < 0) {
      x += len;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= len) {
      x = st < 0 ? len - 1 : len;
    }
    return x;
  };
  const std::int64_t b = clamp(opt_int(start, "start"), st < 0 ? len - 1 : 0);
  const std::int64_t e = clamp(opt_int(stop, "stop"), st < 0 ? -1 : len);
  std::vector<std::int64_t> idx;
  if (st > 0)
    for (std::int64_t i = b; i < e; i += st) idx.push_back(i);
  else
    for (std::int64_t i = b; i > e; i += st) idx.push_back(i);
  if (obj.is_string()) {
    std::string r;
    for (const std::int64_t i : idx) r.append(obj.str(), spans[static_cast<std::size_t>(i)].first, spans[static_cast<std::size_t>(i)].second);
    return Value(std::move(r));
  }
  ValueList r;
  for (const std::int64_t i : idx) r.push_back(obj.items()[static_cast<std::size_t>(i)]);
  return Value::list(std::move(r), obj.is_tuple());
}

Value Interpreter::eval(const Expr& e, Frame& frame) {
  using K = Expr::Kind;
  switch (e.kind) {
    case K::Const: return e.constant;
    case K::Name: {
      const Value* v = frame.lookup(e.name);
      return v ? *v : Value::undefined(e.name);
    }
    case K::GetAttr: return get_attr(eval(*e.children[0], frame), e.name, e.line);
    case K::GetItem: return get_item(eval(*e.children[0], frame), eval(*e.children[1], frame), e.line);
    case K::Slice: {
      const Value obj = eval(*e.children[0], frame);
      const Value a = e.children[1] ? eval(*e.children[1], frame) : Value::none();
      const Value b = e.children[2] ? eval(*e.children[2], frame) : Value::none();
      const Value c = e.children[3] ? eval(*e.children[3], frame) : Value::none();
      return slice(obj, a, b, c, e.line);
    }
    case K::Call: {
      const Value fn = eval(*e.children[0], frame);
      ValueList args;
      for (std::size_t i = 1; i < e.children.size(); ++i) args.push_back(eval(*e.children[i], frame));
      Kwargs kwargs;
      for (const auto& [k, x] : e.kwargs) kwargs.emplace_back(k, eval(*x, frame));
      return call(fn, args, kwargs, e.line);
    }
    case K::Filter: {
      Value input = e.children[0] ? eval(*e.children[0], frame) : Value::undefined();
      ValueList args;
      for (std::size_t i = 1; i < e.children.size(); ++i) args.push_back(eval(*e.children[i], frame));
      Kwargs kwargs;
      for (const auto& [k, x] : e.kwargs) kwargs.emplace_back(k, eval(*x, frame));
      return apply_filter(e.name, std::move(input), args, kwargs, e.line);
    }
    case K::Test: {
      const Value input = eval(*e.children[0], frame);
      ValueList args;
      for (std::size_t i = 1; i < e.children.size(); ++i) args.push_back(eval(*e.children[i], frame));
      for (const auto& [k, x] : e.kwargs) args.push_back(eval(*x, frame));
      return Value(apply_test(e.name, input, args, e.line));
    }
    case K::Neg:
    case K::Pos: {
      const Value v = eval(*e.children[0], frame);
      if (v.is_undefined()) undefined_error(*this, v, e.line);
      if (!v.is_number()) fail(e.line, "bad operand type for unary " + std::string(e.kind == K::Neg ? "-" : "+") + ": '" + v.type_name() + "'");
      if (e.kind == K::Pos) return v.is_float() ? Value(v.as_double()) : Value(v.as_int());
      return v.is_float() ? Value(-v.as_double()) : Value(-v.as_int());
    }
    case K::Not: return Value(!eval(*e.children[0], frame).truthy());
    case K::Binary: return binary(e.name, eval(*e.children[0], frame), eval(*e.children[1], frame), e.line);
    case K::And: {
      Value a = eval(*e.children[0], frame);
      return a.truthy() ? eval(*e.children[1], frame) : a;
    }
    case K::Or: {
      Value a = eval(*e.children[0], frame);
      return a.truthy() ? a : eval(*e.children[1], frame);
    }
    case K::Compare: {
      Value left = eval(*e.children[0], frame);
      for (std::size_t i = 0; i < e.ops.size(); ++i) {
        Value right = eval(*e.children[i + 1], frame);
        if (!compare(e.ops[i], left, right, e.line)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case K::CondExpr: {
      if (eval(*e.children[0], frame).truthy()) return eval(*e.children[1], frame);
      return e.children[2] ? eval(*e.children[2], frame) : Value::undefined();
    }
    case K::List:
    case K::Tuple: {
      ValueList items;
      for (const auto& c : e.children) items.push_back(eval(*c, frame));
      return Value::list(std::move(items), e.kind == K::Tuple);
    }
    case K::Dict: {
      auto d = std::make_shared<Dict>();
      for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) d->set(eval(*e.children[i], frame), eval(*e.children[i + 1], frame));
      return Value::dict(std::move(d));
    }
  }
  fail(e.line, "unknown expression");
}

// ---- Template

Template::Template(std::string_view source) : body_(std::make_shared<Body>(parse(source))) {}

std::string Template::render(const Value& variables, const std::vector<std::pair<std::string, NativeFunction>>& functions) const {
  Frame globals;
  Interpreter in(&globals);
  globals.vars["range"] = make_native("range", [&in](ValueList& args, Kwargs&) -> Value {
    std::int64_t start = 0, stop = 0, step = 1;
    for (const Value& a : args)
      if (!a.is_int() && !a.is_bool()) in.fail(0, "range() arguments must be integers");
    if (args.size() == 1) stop = args[0].as_int();
    else if (args.size() == 2 || args.size() == 3) {
      start = args[0].as_int();
      stop = args[1].as_int();
      if (args.size() == 3) step = args[2].as_int();
    } else {
      in.fail(0, "range() takes 1 to 3 arguments");
    }
    if (step == 0) in.fail(0, "range() step must not be zero");
    ValueList r;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (static_cast<std::int64_t>(r.size()) >= kMaxRange) in.fail(0, "range too big (more than 100000 items)");
      r.emplace_back(i);
    }
    return Value::list(std::move(r));
  });
  globals.vars["namespace"] = make_native("namespace", [](ValueList& args, Kwargs& kwargs) -> Value {
    auto d = std::make_shared<Dict>();
    d->is_namespace = true;
    for (const Value& a : args)
      if (a.is_dict())
        for (const auto& [k, v] : a.dict_ref().entries) d->set(k, v);
    for (auto& [k, v] : kwargs) d->set(Value(k), v);
    return Value::dict(std::move(d));
  });
  globals.vars["dict"] = make_native("dict", [](ValueList& args, Kwargs& kwargs) -> Value {
    auto d = std::make_shared<Dict>();
    for (const Value& a : args)
      if (a.is_dict())
        for (const auto& [k, v] : a.dict_ref().entries) d->set(k, v);
    for (auto& [k, v] : kwargs) d->set(Value(k), v);
    return Value::dict(std::move(d));
  });
  for (const auto& [name, fn] : functions) globals.vars[name] = make_native(name, fn);
  Frame root;
  root.parent = &globals;
  in.set_root(&root);
  if (variables.is_dict())
    for (const auto& [k, v] : variables.dict_ref().entries)
      if (k.is_string()) root.vars[k.str()] = v;
  std::string out;
  in.exec_body(*body_, root, out);
  return out;
}

}  // namespace kvgate::jinja

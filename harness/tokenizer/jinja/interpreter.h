// Evaluation of a parsed template: scopes, statements, expressions. Filters, tests and methods live
// in builtins.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/tokenizer/jinja/ast.h"
#include "harness/tokenizer/jinja/value.h"

namespace kvgate::jinja {

struct Frame {
  std::unordered_map<std::string, Value> vars;
  const Frame* parent = nullptr;
  const Value* lookup(const std::string& name) const {
    for (const Frame* f = this; f; f = f->parent) {
      const auto it = f->vars.find(name);
      if (it != f->vars.end()) return &it->second;
    }
    return nullptr;
  }
};

class Interpreter {
 public:
  explicit Interpreter(Frame* globals) : globals_(globals) {}

  void exec_body(const Body& body, Frame& frame, std::string& out);
  Value eval(const Expr& e, Frame& frame);

  [[noreturn]] void fail(int line, const std::string& msg) const;
  // The line of the call being made (for errors raised inside builtins).
  int call_line() const { return call_line_; }
  Frame* globals() const { return globals_; }
  // The frame of the render's variables: macros resolve names from here.
  Frame* root() const { return root_ ? root_ : globals_; }
  void set_root(Frame* root) { root_ = root; }

  // Calls a callable value.
  Value call(const Value& fn, ValueList& args, Kwargs& kwargs, int line);

  // builtins.cpp
  Value apply_filter(const std::string& name, Value input, ValueList& args, Kwargs& kwargs, int line);
  bool apply_test(const std::string& name, const Value& input, ValueList& args, int line);
  Value get_attr(const Value& obj, const std::string& name, int line);
  Value get_item(const Value& obj, const Value& key, int line);
  ValueList iterate(const Value& v, int line);

 private:
  enum class Flow { Normal, Break, Continue };
  Flow exec(const Body& body, Frame& frame, std::string& out);
  Flow exec_for(const Stmt& s, Frame& frame, std::string& out);
  void assign(const Target& t, Value v, Frame& frame, int line);
  Value binary(const std::string& op, const Value& a, const Value& b, int line);
  bool compare(const std::string& op, const Value& a, const Value& b, int line);
  Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step, int line);

  Frame* globals_;
  Frame* root_ = nullptr;
  int depth_ = 0;
  int call_line_ = 0;
  std::uint64_t steps_ = 0;  // statements run, against a budget (a template is untrusted input)
};

// Python-style error for operations on Undefined.
[[noreturn]] void undefined_error(const Interpreter& in, const Value& v, int line);

}  // namespace kvgate::jinja

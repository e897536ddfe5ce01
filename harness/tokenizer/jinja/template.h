// A parsed Jinja template rendered with a dict of variables and extra global functions. The subset:
// statements if/elif/else, for (tuple targets, "if" filters, else, loop.*), set (names, tuples,
// namespace attributes, blocks), macro, filter, break/continue, generation, raw; Python-like
// expressions with slicing, filters, tests and str/dict/list methods. Not thread-safe while
// rendering; parse once, render from one thread at a time per Template (renders are cheap to copy).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/tokenizer/jinja/ast.h"
#include "harness/tokenizer/jinja/value.h"

namespace kvgate::jinja {

using NativeFunction = std::function<Value(ValueList& args, Kwargs& kwargs)>;

class Template {
 public:
  // Throws kvgate::Error naming the line on syntax errors.
  explicit Template(std::string_view source);
  // Renders with `variables` (a dict) and `functions` added to the globals (range, namespace, dict).
  std::string render(const Value& variables, const std::vector<std::pair<std::string, NativeFunction>>& functions) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace kvgate::jinja

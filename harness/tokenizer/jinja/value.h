// Values of the Jinja subset chat templates use, with Python's semantics where Jinja inherits them:
// truthiness, equality (1 == 1.0 == True), str()/repr() for printing, ordered dicts, and
// Undefined (prints as "", iterates as empty, fails on attribute access and arithmetic).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::jinja {

class Value;
class Interpreter;
using ValueList = std::vector<Value>;
struct Dict;
using Kwargs = std::vector<std::pair<std::string, Value>>;

// A function callable from a template: builtins, macros, bound methods.
struct Callable {
  virtual ~Callable() = default;
  virtual Value call(Interpreter& in, ValueList& args, Kwargs& kwargs) = 0;
  std::string name;
};

class Value {
 public:
  enum class Type : std::uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Callable };

  Value() = default;  // Undefined
  static Value undefined(std::string hint = {}) {
    Value v;
    v.str_ = std::make_shared<const std::string>(std::move(hint));
    return v;
  }
  static Value none() { Value v; v.type_ = Type::None; return v; }
  Value(bool b) : type_(Type::Bool), i_(b) {}
  Value(std::int64_t i) : type_(Type::Int), i_(i) {}
  Value(int i) : type_(Type::Int), i_(i) {}
  Value(double f) : type_(Type::Float), f_(f) {}
  Value(std::string s) : type_(Type::String), str_(std::make_shared<const std::string>(std::move(s))) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::shared_ptr<const std::string> s) : type_(Type::String), str_(std::move(s)) {}
  static Value list(ValueList items, bool tuple = false);
  static Value dict(std::shared_ptr<Dict> d);
  static Value dict();
  static Value callable(std::shared_ptr<Callable> c) { Value v; v.type_ = Type::Callable; v.fn_ = std::move(c); return v; }

  Type type() const { return type_; }
  bool is_undefined() const { return type_ == Type::Undefined; }
  bool is_none() const { return type_ == Type::None; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_int() const { return type_ == Type::Int; }
  bool is_float() const { return type_ == Type::Float; }
  bool is_number() const { return type_ == Type::Int || type_ == Type::Float || type_ == Type::Bool; }
  bool is_string() const { return type_ == Type::String; }
  bool is_list() const { return type_ == Type::List; }
  bool is_tuple() const { return type_ == Type::List && tuple_; }
  bool is_dict() const { return type_ == Type::Dict; }
  bool is_callable() const { return type_ == Type::Callable; }

  bool as_bool() const { return i_ != 0; }
  std::int64_t as_int() const { return type_ == Type::Float ? static_cast<std::int64_t>(f_) : i_; }
  double as_double() const { return type_ == Type::Float ? f_ : static_cast<double>(i_); }
  const std::string& str() const { return *str_; }
  const std::shared_ptr<const std::string>& str_ptr() const { return str_; }
  const ValueList& items() const { return *list_; }
  ValueList& items_mut() { return *list_; }
  Dict& dict_ref() const { return *dict_; }
  const std::shared_ptr<Dict>& dict_ptr() const { return dict_; }
  Callable& fn() const { return *fn_; }
  const std::string& undefined_hint() const { return *str_; }

  bool truthy() const;
  // Python's str(): what {{ value }} prints (Undefined prints nothing).
  std::string to_str() const;
  // Python's repr().
  std::string repr() const;
  // Python's type name, for error messages.
  std::string type_name() const;

 private:
  Type type_ = Type::Undefined;
  bool tuple_ = false;
  union {
    std::int64_t i_ = 0;
    double f_;
  };
  std::shared_ptr<const std::string> str_;  // String, or Undefined's hint
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Callable> fn_;
};

// An insertion-ordered dict (Python 3.7+). Namespaces are dicts whose attributes templates may set.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  bool is_namespace = false;
  const Value* find(const Value& key) const;
  const Value* find_str(std::string_view key) const;
  void set(const Value& key, Value v);
};

// Python ==, with 1 == 1.0 == True and element-wise containers.
bool equals(const Value& a, const Value& b);
// Python <, for numbers, strings and lists; throws kvgate::Error otherwise.
bool less(const Value& a, const Value& b);

// Python's repr of a float ("1.0", "1e-05", "inf").
std::string py_float_repr(double d);
// Python's repr of a string ('quoted', with escapes).
std::string py_str_repr(const std::string& s);

struct JsonDumpOptions {
  int indent = -1;  // -1: none
  std::string item_separator = ", ", key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps as transformers' tojson filter calls it.
std::string json_dumps(const Value& v, const JsonDumpOptions& options);

// JSON to values, keeping object key order.
Value from_json(const nlohmann::ordered_json& j);

}  // namespace kvgate::jinja

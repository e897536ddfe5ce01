#include "harness/core/json_fields.h"

#include <cmath>

#include "harness/core/error.h"

namespace kvgate {

using nlohmann::json;

std::string describe_json_value(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + text;
}

FieldReader::FieldReader(const json& object, std::string where) : obj_(object), where_(std::move(where)) {
  if (!obj_.is_object()) throw Error(where_ + ": expected a JSON object, got " + describe_json_value(obj_));
}

void FieldReader::fail(const char* key, const std::string& what) const {
  throw Error(where_ + ": field \"" + key + "\" " + what);
}

bool FieldReader::has(const char* key) const { return obj_.contains(key); }

bool FieldReader::has_value(const char* key) const {
  auto it = obj_.find(key);
  return it != obj_.end() && !it->is_null();
}

const json& FieldReader::get(const char* key) const {
  auto it = obj_.find(key);
  if (it == obj_.end()) fail(key, "missing");
  return *it;
}

const json& FieldReader::any(const char* key) const { return get(key); }

std::string FieldReader::str(const char* key) const {
  const json& v = get(key);
  if (!v.is_string()) fail(key, "must be a string, got " + describe_json_value(v));
  return v.get<std::string>();
}

std::int64_t FieldReader::integer(const char* key) const {
  const json& v = get(key);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
  }
  fail(key, "must be an integer, got " + describe_json_value(v));
}

double FieldReader::number(const char* key) const {
  const json& v = get(key);
  if (!v.is_number()) fail(key, "must be a number, got " + describe_json_value(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "must be finite");
  return d;
}

bool FieldReader::boolean(const char* key) const {
  const json& v = get(key);
  if (!v.is_boolean()) fail(key, "must be true or false, got " + describe_json_value(v));
  return v.get<bool>();
}

const json& FieldReader::object(const char* key) const {
  const json& v = get(key);
  if (!v.is_object()) fail(key, "must be an object, got " + describe_json_value(v));
  return v;
}

const json& FieldReader::array(const char* key) const {
  const json& v = get(key);
  if (!v.is_array()) fail(key, "must be an array, got " + describe_json_value(v));
  return v;
}

std::optional<std::string> FieldReader::opt_str(const char* key) const {
  if (!has_value(key)) return std::nullopt;
  return str(key);
}

std::optional<std::int64_t> FieldReader::opt_integer(const char* key) const {
  if (!has_value(key)) return std::nullopt;
  return integer(key);
}

std::optional<double> FieldReader::opt_number(const char* key) const {
  if (!has_value(key)) return std::nullopt;
  return number(key);
}

std::optional<bool> FieldReader::opt_boolean(const char* key) const {
  if (!has_value(key)) return std::nullopt;
  return boolean(key);
}

}  // namespace kvgate

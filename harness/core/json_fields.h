// Strict access to the fields of a JSON object read from a file: a missing field or a wrong type
// becomes an Error that names the place (`tasks.jsonl:17: field "id" missing`).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate {

class FieldReader {
 public:
  // `where` names the object for error messages, e.g. "tasks.jsonl:17".
  FieldReader(const nlohmann::json& object, std::string where);

  const std::string& where() const { return where_; }
  bool has(const char* key) const;
  // Present and not null.
  bool has_value(const char* key) const;

  std::string str(const char* key) const;
  std::int64_t integer(const char* key) const;
  double number(const char* key) const;  // any JSON number, must be finite
  bool boolean(const char* key) const;
  const nlohmann::json& object(const char* key) const;
  const nlohmann::json& array(const char* key) const;
  const nlohmann::json& any(const char* key) const;  // present, any type

  std::optional<std::string> opt_str(const char* key) const;  // absent or null -> nullopt
  std::optional<std::int64_t> opt_integer(const char* key) const;
  std::optional<double> opt_number(const char* key) const;
  std::optional<bool> opt_boolean(const char* key) const;

  [[noreturn]] void fail(const char* key, const std::string& what) const;

 private:
  const nlohmann::json& get(const char* key) const;
  const nlohmann::json& obj_;
  std::string where_;
};

// "string \"abc\"", "number 3.5", "null": the JSON type of a value and a short excerpt, for messages.
std::string describe_json_value(const nlohmann::json& v);

}  // namespace kvgate

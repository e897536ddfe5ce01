// The parameters of a trial's "grader" object, checked: gen checks them once for the whole file
// (check_grader_params), graders read them with a GraderParams that names the trial on a bad value.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

enum class ParamType { boolean, number, integer, string, string_array };

struct ParamSpec {
  const char* key;
  ParamType type;
  bool required = false;
  const char* help = "";
};

// The parameters each custom grader accepts; nullptr for a grader that is not a custom one.
const std::vector<ParamSpec>* custom_grader_params(const std::string& grader);

// Checks a whole "grader" object ({"name": ..., params}) against its grader's specification: unknown
// keys (typos), wrong types, missing required keys, and values graders would reject (a regex that does
// not compile, an unknown select, negative tolerances). Errors start with `where`.
void check_grader_params(const nlohmann::json& grader, const std::string& where);

class GraderParams {
 public:
  // `where` names the trial ("trial custom/0003: grader regex").
  GraderParams(const nlohmann::json& grader, std::string where) : g_(grader), where_(std::move(where)) {}
  bool flag(const char* key, bool fallback) const;
  double number(const char* key, double fallback) const;
  std::optional<std::int64_t> integer(const char* key) const;
  std::string str(const char* key, const std::string& fallback) const;
  std::string required_str(const char* key) const;
  std::vector<std::string> strings(const char* key) const;  // absent = empty
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& g_;
  std::string where_{};
};

}  // namespace kvgate

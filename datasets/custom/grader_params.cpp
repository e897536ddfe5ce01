#include "datasets/custom/grader_params.h"

#include <map>

#include "datasets/common/pcre_regex.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"

namespace kvgate {

using nlohmann::json;

namespace {

const std::vector<ParamSpec> kTextParams = {
    {"case_sensitive", ParamType::boolean, false, "compare case (default false)"},
    {"ignore_punctuation", ParamType::boolean, false, "drop ASCII punctuation from both sides (default false)"},
    {"regexes_to_ignore", ParamType::string_array, false, "regexes removed from both sides first, as lm-eval's exact_match"},
};

std::vector<ParamSpec> with_text(std::vector<ParamSpec> own) {
  own.insert(own.end(), kTextParams.begin(), kTextParams.end());
  return own;
}

const std::map<std::string, std::vector<ParamSpec>>& table() {
  static const std::map<std::string, std::vector<ParamSpec>> t = {
      {"exact", kTextParams},
      {"contains", kTextParams},
      {"regex", with_text({{"pattern", ParamType::string, true, "extraction regex (Python syntax)"},
                           {"group", ParamType::integer, false, "capture group to take (default: the first non-empty one)"},
                           {"select", ParamType::string, false, "\"first\" (default) or \"last\" match"},
                           {"pattern_ignore_case", ParamType::boolean, false, "match the pattern case-insensitively"}})},
      {"numeric", {{"tolerance", ParamType::number, false, "absolute tolerance (default 1e-6)"},
                   {"relative_tolerance", ParamType::number, false, "relative tolerance (default 0)"},
                   {"require_boxed", ParamType::boolean, false, "only a \\boxed{} answer counts (default false)"}}},
      {"choice", {{"choices", ParamType::string, false, "the option letters (default ABCDEFGHIJ)"},
                  {"fallback_last_letter", ParamType::boolean, false,
                   "as a last resort take the last standalone letter, as MMLU-Pro's script (default false)"}}},
      {"json_field", {{"field", ParamType::string, true, "dotted path (\"a.b.0\") or JSON pointer (\"/a/b/0\")"},
                      {"allow_code_fence", ParamType::boolean, false, "accept JSON inside one ``` fence (default false)"},
                      {"case_sensitive", ParamType::boolean, false, "compare strings with case (default false)"}}},
  };
  return t;
}

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::boolean: return "true or false";
    case ParamType::number: return "a number";
    case ParamType::integer: return "an integer";
    case ParamType::string: return "a string";
    case ParamType::string_array: return "an array of strings";
  }
  return "";
}

bool has_type(const json& v, ParamType t) {
  switch (t) {
    case ParamType::boolean: return v.is_boolean();
    case ParamType::number: return v.is_number();
    case ParamType::integer: return v.is_number_integer();
    case ParamType::string: return v.is_string();
    case ParamType::string_array:
      if (!v.is_array()) return false;
      for (const json& x : v)
        if (!x.is_string()) return false;
      return true;
  }
  return false;
}

}  // namespace

const std::vector<ParamSpec>* custom_grader_params(const std::string& grader) {
  auto it = table().find(grader);
  return it == table().end() ? nullptr : &it->second;
}

void check_grader_params(const json& grader, const std::string& where) {
  if (!grader.is_object() || !grader.contains("name") || !grader["name"].is_string())
    throw Error(where + ": the grader must be an object with a \"name\"");
  const std::string name = grader["name"].get<std::string>();
  const std::vector<ParamSpec>* specs = custom_grader_params(name);
  if (!specs) return;
  const std::string at = where + ": grader " + name;
  for (const auto& [key, value] : grader.items()) {
    if (key == "name") continue;
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& s : *specs)
      if (key == s.key) spec = &s;
    if (!spec) {
      std::string known;
      for (const ParamSpec& s : *specs) known += (known.empty() ? "" : ", ") + std::string(s.key);
      throw Error(at + ": unknown parameter \"" + key + "\" (known: " + (known.empty() ? "none" : known) + ")");
    }
    if (!has_type(value, spec->type))
      throw Error(at + ": parameter \"" + key + "\" must be " + type_name(spec->type) + ", got " + describe_json_value(value));
  }
  for (const ParamSpec& s : *specs)
    if (s.required && !grader.contains(s.key))
      throw Error(at + ": parameter \"" + s.key + "\" is required (" + s.help + "); pass it in --grader-params");
  // Values the graders would reject at grading time: reject them now, before a run.
  auto regex_ok = [&](const std::string& key, const std::string& pattern) {
    try {
      Regex r(pattern);
      return r.group_count();
    } catch (const Error& e) {
      throw Error(at + ": parameter \"" + key + "\": " + e.what());
    }
  };
  if (grader.contains("regexes_to_ignore"))
    for (const json& p : grader["regexes_to_ignore"]) regex_ok("regexes_to_ignore", p.get<std::string>());
  if (name == "regex") {
    const int groups = regex_ok("pattern", grader["pattern"].get<std::string>());
    if (grader.contains("group")) {
      const auto g = grader["group"].get<std::int64_t>();
      if (g < 0 || g > groups)
        throw Error(at + ": parameter \"group\" is " + std::to_string(g) + " but the pattern has " + std::to_string(groups) +
                    " group(s) (0 = the whole match)");
    }
    if (grader.contains("select") && grader["select"] != "first" && grader["select"] != "last")
      throw Error(at + ": parameter \"select\" must be \"first\" or \"last\"");
  }
  for (const char* key : {"tolerance", "relative_tolerance"})
    if (grader.contains(key) && !(grader[key].get<double>() >= 0.0))
      throw Error(at + ": parameter \"" + key + "\" must be 0 or more");
  if (name == "choice" && grader.contains("choices")) {
    const std::string c = grader["choices"].get<std::string>();
    bool ok = c.size() >= 2 && c.size() <= 26;
    for (std::size_t i = 0; ok && i < c.size(); ++i) ok = c[i] >= 'A' && c[i] <= 'Z' && c.find(c[i]) == i;
    if (!ok) throw Error(at + ": parameter \"choices\" must be 2 to 26 distinct capital letters, e.g. \"ABCD\"");
  }
  if (name == "json_field" && grader["field"].get<std::string>().empty())
    throw Error(at + ": parameter \"field\" must name a field");
}

void GraderParams::fail(const std::string& what) const { throw Error(where_ + ": " + what); }

bool GraderParams::flag(const char* key, bool fallback) const {
  if (!g_.contains(key)) return fallback;
  if (!g_[key].is_boolean()) fail(std::string("parameter \"") + key + "\" must be true or false");
  return g_[key].get<bool>();
}

double GraderParams::number(const char* key, double fallback) const {
  if (!g_.contains(key)) return fallback;
  if (!g_[key].is_number()) fail(std::string("parameter \"") + key + "\" must be a number");
  return g_[key].get<double>();
}

std::optional<std::int64_t> GraderParams::integer(const char* key) const {
  if (!g_.contains(key)) return std::nullopt;
  if (!g_[key].is_number_integer()) fail(std::string("parameter \"") + key + "\" must be an integer");
  return g_[key].get<std::int64_t>();
}

std::string GraderParams::str(const char* key, const std::string& fallback) const {
  if (!g_.contains(key)) return fallback;
  if (!g_[key].is_string()) fail(std::string("parameter \"") + key + "\" must be a string");
  return g_[key].get<std::string>();
}

std::string GraderParams::required_str(const char* key) const {
  if (!g_.contains(key)) fail(std::string("parameter \"") + key + "\" is required");
  return str(key, "");
}

std::vector<std::string> GraderParams::strings(const char* key) const {
  std::vector<std::string> out;
  if (!g_.contains(key)) return out;
  if (!has_type(g_[key], ParamType::string_array)) fail(std::string("parameter \"") + key + "\" must be an array of strings");
  for (const json& s : g_[key]) out.push_back(s.get<std::string>());
  return out;
}

}  // namespace kvgate

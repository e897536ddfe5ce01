// json_field: structured answers ({"answer": 42, ...}).
#include <cmath>

#include "datasets/common/numbers.h"
#include "datasets/common/thinking.h"
#include "datasets/custom/custom_graders.h"
#include "datasets/custom/grade_util.h"
#include "datasets/custom/text_match.h"

namespace kvgate {

using nlohmann::json;

namespace {

// Dotted path "a.b.0" or JSON pointer "/a/b/0"; nullptr when absent.
const json* find_field(const json& root, const std::string& field) {
  if (!field.empty() && field[0] == '/') {
    try {
      const json::json_pointer ptr(field);
      return root.contains(ptr) ? &root.at(ptr) : nullptr;
    } catch (const json::exception&) {
      return nullptr;
    }
  }
  const json* at = &root;
  std::size_t pos = 0;
  while (pos <= field.size()) {
    const std::size_t dot = field.find('.', pos);
    const std::string key = field.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (at->is_object()) {
      auto it = at->find(key);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
      const std::size_t i = std::stoul(key);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return at;
}

std::optional<double> as_number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    if (auto c = canonical_decimal(v.get<std::string>())) return std::stod(*c);
  }
  return std::nullopt;
}

bool values_equal(const json& got, const json& want, const TextMatchOptions& o) {
  if (got.is_string() && want.is_string()) return normalize_text(got.get<std::string>(), o) == normalize_text(want.get<std::string>(), o);
  if ((got.is_number() || got.is_string()) && (want.is_number() || want.is_string())) {
    const auto a = as_number(got), b = as_number(want);
    return a && b && *a == *b;
  }
  return got == want;
}

}  // namespace

Grade grade_json_field(const GradeInput& in) {
  const GraderParams p(in.trial.grader, "trial " + in.trial.id + ": grader json_field");
  const std::string field = p.required_str("field");
  TextMatchOptions o;
  o.case_sensitive = p.flag("case_sensitive", false);
  const ThinkingSplit split = split_thinking(in.response);
  std::string text = split.answer;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (p.flag("allow_code_fence", false) && text.rfind("```", 0) == 0 && text.size() >= 6 && text.substr(text.size() - 3) == "```") {
    text = text.substr(3, text.size() - 6);
    const std::size_t nl = text.find('\n');
    if (nl != std::string::npos && text.substr(0, nl).find_first_of("{[") == std::string::npos) text = text.substr(nl + 1);
  }
  const json doc = json::parse(text, nullptr, false);
  Grade g;
  if (doc.is_discarded() || !(doc.is_object() || doc.is_array())) {
    g = binary_grade(false, "", "the response is not a JSON object or array", split);
    g.extracted = "[invalid json]";
    g.value = split.answer.empty() ? GradeValue::no_answer : GradeValue::incorrect;
    g.details["json_valid"] = false;
    return g;
  }
  const json* value = find_field(doc, field);
  if (!value) {
    g = binary_grade(false, "", "the JSON has no field \"" + field + "\"", split);
    g.extracted = "[missing field]";
    g.value = GradeValue::incorrect;
    g.details["json_valid"] = true;
    return g;
  }
  const std::string shown = value->is_string() ? value->get<std::string>() : value->dump();
  const bool ok = values_equal(*value, in.trial.target, o);
  g = binary_grade(ok, shown, ok ? "field \"" + field + "\" equals the target" : "field \"" + field + "\" differs from the target", split);
  g.details["json_valid"] = true;
  return g;
}

}  // namespace kvgate

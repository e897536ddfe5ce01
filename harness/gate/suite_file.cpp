// Reading suites: built-in names, YAML (yaml-cpp) and JSON files.
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/gate/suite.h"

namespace kvgate::gate {

using nlohmann::json;

namespace {

// YAML 1.2 core schema for plain scalars; a quoted scalar (tag "!") is always a string.
json typed_scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex int_re("[-+]?[0-9]+");
  static const std::regex float_re(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(s, int_re)) {
    std::int64_t v = 0;
    const char* b = s.data() + (s[0] == '+' ? 1 : 0);
    const auto r = std::from_chars(b, s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return v;
    return s;  // out of range: left as text, the validator says what it wanted
  }
  if (std::regex_match(s, float_re)) return std::strtod(s.c_str(), nullptr);
  return s;
}

json convert(const YAML::Node& n, const std::string& source, const std::string& pointer, LineMap* lines) {
  if (lines) (*lines)[pointer] = n.Mark().line + 1;
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar: return typed_scalar(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      std::size_t i = 0;
      for (const YAML::Node& item : n) a.push_back(convert(item, source, pointer + "/" + std::to_string(i++), lines));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw Error(source + ":" + std::to_string(kv.first.Mark().line + 1) + ": a mapping key must be a plain name");
        const std::string key = kv.first.Scalar();
        if (o.contains(key))
          throw Error(source + ":" + std::to_string(kv.first.Mark().line + 1) + ": key \"" + key +
                      "\" given twice in one mapping: keep one");
        o[key] = convert(kv.second, source, pointer + "/" + key, lines);
      }
      return o;
    }
  }
  return nullptr;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string builtin_list() {
  std::string list;
  for (const auto& [name, text] : builtin_suites()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace

json yaml_to_json(const std::string& text, const std::string& source, LineMap* lines) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  return convert(root, source, "", lines);
}

Suite load_suite(const std::string& name_or_path) {
  const auto& builtins = builtin_suites();
  if (auto it = builtins.find(name_or_path); it != builtins.end()) {
    LineMap lines;
    const std::string source = "built-in suite " + name_or_path;
    Suite s = parse_suite(yaml_to_json(it->second, source, &lines), source, lines);
    s.source = "built-in";
    return s;
  }
  const bool json_file = ends_with(name_or_path, ".json");
  const bool yaml_file = ends_with(name_or_path, ".yaml") || ends_with(name_or_path, ".yml");
  if (!json_file && !yaml_file)
    throw Error("--suite " + name_or_path + ": not a built-in suite (" + builtin_list() +
                ") nor a suite file (.yaml, .yml or .json)");
  if (!std::filesystem::is_regular_file(name_or_path))
    throw Error("--suite " + name_or_path + ": no such file (built-in suites: " + builtin_list() + ")");
  const std::string text = read_file(name_or_path);
  LineMap lines;
  json doc;
  if (json_file) {
    doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) throw Error(name_or_path + ": not valid JSON (a YAML suite needs the .yaml extension)");
  } else {
    doc = yaml_to_json(text, name_or_path, &lines);
  }
  return parse_suite(doc, name_or_path, lines);
}

}  // namespace kvgate::gate

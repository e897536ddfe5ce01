#include "datasets/custom/template.h"

#include <algorithm>

#include "harness/core/error.h"
#include "harness/core/json_fields.h"

namespace kvgate {

using nlohmann::json;

PromptTemplate::PromptTemplate(std::string_view text) {
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal.push_back(c);
      ++i;
      continue;
    }
    if (c == '}')
      throw Error("--template: a lone '}' at offset " + std::to_string(i) + "; write }} for a literal brace");
    if (c != '{') {
      literal.push_back(c);
      continue;
    }
    const std::size_t close = text.find('}', i);
    const std::string name(text.substr(i + 1, close == std::string_view::npos ? 0 : close - i - 1));
    const bool ok = close != std::string_view::npos && !name.empty() &&
                    name.find_first_of("{ \t\n\"'") == std::string::npos;
    if (!ok)
      throw Error("--template: '{' at offset " + std::to_string(i) +
                  " does not start a {field} placeholder; write {{ and }} for literal braces");
    if (!literal.empty()) pieces_.push_back({false, std::move(literal)});
    literal.clear();
    pieces_.push_back({true, name});
    if (std::find(fields_.begin(), fields_.end(), name) == fields_.end()) fields_.push_back(name);
    i = close;
  }
  if (!literal.empty()) pieces_.push_back({false, std::move(literal)});
  if (fields_.empty()) throw Error("--template: no {field} placeholder: the prompt would be the same for every row");
}

std::string field_text(const json& v, const std::string& where, const std::string& field) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  if (v.is_array()) {
    if (v.size() > 26) throw Error(where + ": field \"" + field + "\" has " + std::to_string(v.size()) + " options (at most 26 letters)");
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() && !v[i].is_number())
        throw Error(where + ": field \"" + field + "\"[" + std::to_string(i) + "] must be a string or number to list as an option");
      out += (i ? "\n" : "") + std::string(1, static_cast<char>('A' + i)) + ". " + (v[i].is_string() ? v[i].get<std::string>() : v[i].dump());
    }
    return out;
  }
  throw Error(where + ": field \"" + field + "\" is " + describe_json_value(v) +
              ": a prompt field must be a string, a number or an array of options");
}

std::string PromptTemplate::render(const json& row, const std::string& where) const {
  std::string out;
  for (const Piece& p : pieces_) {
    if (!p.field) {
      out += p.text;
      continue;
    }
    auto it = row.find(p.text);
    if (it == row.end()) throw Error(where + ": field \"" + p.text + "\" missing (used by --template)");
    out += field_text(*it, where, p.text);
  }
  return out;
}

}  // namespace kvgate

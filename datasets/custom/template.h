// --template "...{question}...": a prompt built from a row's fields. {name} is replaced by the field's
// value (a string as it is, a number or boolean as JSON writes it, an array of strings as lettered
// options "A. ...\nB. ..."); {{ and }} are literal braces. Anything else in braces is an error, so a
// typo never reaches a model.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate {

class PromptTemplate {
 public:
  // Error ("--template: ...") for an unmatched brace or an empty or malformed placeholder.
  explicit PromptTemplate(std::string_view text);
  const std::vector<std::string>& fields() const { return fields_; }  // in order of first use
  // Error naming `where` (e.g. "data.jsonl:7") and the field when the row lacks one or holds an object.
  std::string render(const nlohmann::json& row, const std::string& where) const;

 private:
  struct Piece {
    bool field{};
    std::string text{};  // literal text or field name
  };
  std::vector<Piece> pieces_{};
  std::vector<std::string> fields_{};
};

// One field value as prompt text (see above); Error naming where and field for objects and nulls.
std::string field_text(const nlohmann::json& value, const std::string& where, const std::string& field);

}  // namespace kvgate

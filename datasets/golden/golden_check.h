// Structural checks of one golden-prompt output: is it empty, cut off by the token limit, invalid
// JSON where JSON was asked for, a tool call that does not parse or names a tool the request did not
// offer? Shared by the per-trial `golden` grader and the baseline/candidate comparison.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace kvgate {

enum class BreakKind {
  empty,                   // no answer text and no tool call
  truncated,               // finish_reason "length"
  invalid_json,            // not JSON although JSON was requested (or the baseline's was JSON)
  tool_call_unparseable,   // a tool call without a function name, or arguments that are not a JSON object
  tool_call_unknown_tool,  // a tool call naming a tool the request did not offer
  tool_call_dropped,       // (comparison only) the baseline called tools, the candidate called none
};
const char* to_string(BreakKind kind);

// What a golden prompt asked for, from the trial's input (or from a grade's details, see below).
struct GoldenRequest {
  bool json_requested = false;          // response_format json_object or json_schema
  std::vector<std::string> tool_names{};  // the functions offered in "tools"
  bool tools_known = true;  // false when the request is unknown (results without the golden grader's details)
};
GoldenRequest golden_request_from_input(const nlohmann::json& input);
nlohmann::json to_json(const GoldenRequest& request);
// The inverse of to_json; the golden grader records it in grade.details.request so `compare` can
// check from run directories alone. An Error names `where` when malformed.
GoldenRequest golden_request_from_json(const nlohmann::json& j, const std::string& where);

// One output as a results line holds it.
struct GoldenOutput {
  std::string response{};       // the answer text (thinking is removed by the checks)
  std::string finish_reason{};  // "stop", "length", "tool_calls", ...
  nlohmann::json tool_calls = nullptr;  // OpenAI's message.tool_calls array, or null
};
// response, finish_reason and the extra field "tool_calls" of a results line.
GoldenOutput golden_output_from_result(const ResultRecord& record);

struct OutputProblem {
  BreakKind kind{};
  std::string detail{};  // one line: which tool, the JSON parse error, ...
};

// Whether text is a JSON object or array, by itself or as the only content of one ``` fence.
struct JsonCheck {
  bool valid = false;
  bool fenced = false;
  std::string error{};  // the parser's message when not valid
};
JsonCheck check_json_text(std::string_view text);

// The answer text the checks and comparisons look at: thinking removed, whitespace trimmed.
std::string golden_answer_text(std::string_view response);
// Number of structured tool calls (0 for null or an empty array).
std::size_t tool_call_count(const nlohmann::json& tool_calls);

// Every structural problem of one output, self-contained (JSON checked only when requested).
std::vector<OutputProblem> check_golden_output(const GoldenRequest& request, const GoldenOutput& output);

}  // namespace kvgate

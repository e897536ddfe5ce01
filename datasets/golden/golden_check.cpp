#include "datasets/golden/golden_check.h"

#include "datasets/common/thinking.h"
#include "harness/core/error.h"

namespace kvgate {

using nlohmann::json;

const char* to_string(BreakKind k) {
  switch (k) {
    case BreakKind::empty: return "empty";
    case BreakKind::truncated: return "truncated";
    case BreakKind::invalid_json: return "invalid_json";
    case BreakKind::tool_call_unparseable: return "tool_call_unparseable";
    case BreakKind::tool_call_unknown_tool: return "tool_call_unknown_tool";
    case BreakKind::tool_call_dropped: return "tool_call_dropped";
  }
  return "empty";
}

GoldenRequest golden_request_from_input(const json& input) {
  GoldenRequest r;
  if (input.contains("response_format") && input["response_format"].is_object()) {
    const std::string type = input["response_format"].value("type", "");
    r.json_requested = type == "json_object" || type == "json_schema";
  }
  if (input.contains("tools") && input["tools"].is_array())
    for (const json& tool : input["tools"])
      if (tool.is_object() && tool.contains("function") && tool["function"].is_object() &&
          tool["function"].contains("name") && tool["function"]["name"].is_string())
        r.tool_names.push_back(tool["function"]["name"].get<std::string>());
  return r;
}

json to_json(const GoldenRequest& r) { return {{"json_requested", r.json_requested}, {"tools", r.tool_names}}; }

GoldenRequest golden_request_from_json(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("json_requested") || !j["json_requested"].is_boolean() || !j.contains("tools") ||
      !j["tools"].is_array())
    throw Error(where + ": golden request must be {\"json_requested\": bool, \"tools\": [names]}");
  GoldenRequest r;
  r.json_requested = j["json_requested"].get<bool>();
  for (const json& name : j["tools"]) {
    if (!name.is_string()) throw Error(where + ": golden request \"tools\" must hold tool names (strings)");
    r.tool_names.push_back(name.get<std::string>());
  }
  return r;
}

GoldenOutput golden_output_from_result(const ResultRecord& r) {
  GoldenOutput o;
  o.response = r.response;
  o.finish_reason = r.finish_reason;
  if (r.extra.contains("tool_calls")) o.tool_calls = r.extra["tool_calls"];
  return o;
}

std::string golden_answer_text(std::string_view response) {
  std::string s = strip_thinking(response);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::size_t tool_call_count(const json& tool_calls) { return tool_calls.is_array() ? tool_calls.size() : 0; }

JsonCheck check_json_text(std::string_view text) {
  JsonCheck c;
  auto parse = [&](std::string_view s) {
    json v = json::parse(s.begin(), s.end(), nullptr, false);
    if (v.is_discarded()) return false;
    return v.is_object() || v.is_array();
  };
  if (parse(text)) {
    c.valid = true;
    return c;
  }
  // ```json\n{...}\n```: the whole text one fenced block.
  if (text.rfind("```", 0) == 0 && text.size() >= 6 && text.substr(text.size() - 3) == "```") {
    std::string_view inner = text.substr(3, text.size() - 6);
    const std::size_t nl = inner.find('\n');
    if (nl != std::string_view::npos && inner.substr(0, nl).find_first_of("{[") == std::string_view::npos) inner = inner.substr(nl + 1);
    if (parse(inner)) {
      c.valid = c.fenced = true;
      return c;
    }
  }
  try {
    json v = json::parse(text.begin(), text.end());
    c.error = "a JSON " + std::string(v.type_name()) + ", not an object or array";
  } catch (const json::parse_error& e) {
    c.error = e.what();
  }
  return c;
}

std::vector<OutputProblem> check_golden_output(const GoldenRequest& request, const GoldenOutput& o) {
  std::vector<OutputProblem> out;
  const std::string answer = golden_answer_text(o.response);
  const std::size_t calls = tool_call_count(o.tool_calls);
  if (answer.empty() && calls == 0) out.push_back({BreakKind::empty, "no answer text and no tool call"});
  if (o.finish_reason == "length") out.push_back({BreakKind::truncated, "finish_reason is \"length\": cut off at the token limit"});
  if (request.json_requested && calls == 0 && !answer.empty()) {
    const JsonCheck j = check_json_text(answer);
    if (!j.valid) out.push_back({BreakKind::invalid_json, "JSON was requested; " + j.error});
  }
  if (!o.tool_calls.is_null() && !o.tool_calls.is_array()) {
    out.push_back({BreakKind::tool_call_unparseable, "tool_calls is not an array"});
    return out;
  }
  for (std::size_t i = 0; i < calls; ++i) {
    const json& call = o.tool_calls[i];
    const std::string at = "tool call " + std::to_string(i);
    const json* fn = call.is_object() && call.contains("function") && call["function"].is_object() ? &call["function"] : nullptr;
    if (!fn || !fn->contains("name") || !(*fn)["name"].is_string() || (*fn)["name"].get_ref<const std::string&>().empty()) {
      out.push_back({BreakKind::tool_call_unparseable, at + " has no function name"});
      continue;
    }
    const std::string& name = (*fn)["name"].get_ref<const std::string&>();
    bool known = false;
    for (const std::string& t : request.tool_names) known = known || t == name;
    if (!known && request.tools_known) out.push_back({BreakKind::tool_call_unknown_tool, at + " names \"" + name + "\", which the request did not offer"});
    const json args = fn->contains("arguments") ? (*fn)["arguments"] : json();
    bool ok = args.is_object();  // some servers send the arguments parsed
    std::string why = "arguments are " + std::string(args.type_name()) + ", not a JSON object";
    if (args.is_string()) {
      const std::string& text = args.get_ref<const std::string&>();
      const json parsed = json::parse(text, nullptr, false);
      ok = !parsed.is_discarded() && parsed.is_object();
      why = "arguments " + (text.size() > 60 ? text.substr(0, 57) + "..." : text) + " are not a JSON object";
    }
    if (!ok) out.push_back({BreakKind::tool_call_unparseable, at + " (" + name + "): " + why});
  }
  return out;
}

}  // namespace kvgate

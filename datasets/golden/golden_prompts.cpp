#include "datasets/golden/golden_prompts.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "datasets/common/chat_messages.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"
#include "harness/core/rng.h"

namespace kvgate {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void check_tools(const FieldReader& f, const json& tools) {
  if (!tools.is_array()) f.fail("tools", "must be an array of {\"type\": \"function\", \"function\": {\"name\": ...}}");
  std::set<std::string> names;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const json& t = tools[i];
    const std::string at = "[" + std::to_string(i) + "]";
    if (!t.is_object() || t.value("type", "function") != "function" || !t.contains("function") || !t["function"].is_object())
      f.fail("tools", at + " must be {\"type\": \"function\", \"function\": {...}}");
    const json& fn = t["function"];
    if (!fn.contains("name") || !fn["name"].is_string() || fn["name"].get_ref<const std::string&>().empty())
      f.fail("tools", at + ".function has no \"name\"");
    if (!names.insert(fn["name"].get<std::string>()).second)
      f.fail("tools", at + ": tool \"" + fn["name"].get<std::string>() + "\" is offered twice");
    if (fn.contains("parameters") && !fn["parameters"].is_object())
      f.fail("tools", at + ".function.parameters must be a JSON Schema object");
  }
}

void check_response_format(const FieldReader& f, const json& rf) {
  if (!rf.is_object() || !rf.contains("type") || !rf["type"].is_string())
    f.fail("response_format", "must be {\"type\": \"text\" | \"json_object\" | \"json_schema\", ...}");
  const std::string type = rf["type"].get<std::string>();
  if (type != "text" && type != "json_object" && type != "json_schema")
    f.fail("response_format", "type \"" + type + "\" is not one of text, json_object, json_schema");
  if (type == "json_schema" && !(rf.contains("json_schema") && rf["json_schema"].is_object()))
    f.fail("response_format", "type json_schema needs a \"json_schema\" object");
}

std::string id_text(const FieldReader& f, const json& v, const char* key) {
  if (v.is_string() && !v.get_ref<const std::string&>().empty()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  f.fail(key, "must be a non-empty string or an integer, got " + describe_json_value(v));
}

}  // namespace

GoldenGenResult make_golden_trials(const GoldenGenOptions& o) {
  if (o.max_tokens && *o.max_tokens <= 0) throw Error("--max-tokens: must be a positive number of tokens");
  GoldenGenResult result;
  std::set<std::string> ignored;
  std::unordered_map<std::string, std::size_t> seen;  // id -> line
  for_each_jsonl(o.prompts_path, [&](json&& line_value, std::size_t line) {
    const std::string where = o.prompts_path + ":" + std::to_string(line);
    FieldReader outer(line_value, where);  // Error unless an object
    const bool batch = line_value.contains("body");
    const json& request = batch ? outer.object("body") : line_value;
    FieldReader f(request, batch ? where + ": body" : where);
    if (batch && line_value.contains("url") && line_value["url"].is_string() &&
        line_value["url"].get_ref<const std::string&>().find("chat/completions") == std::string::npos)
      outer.fail("url", "is " + line_value["url"].get<std::string>() + ": golden prompts are chat requests (/v1/chat/completions)");

    std::string id;
    if (batch && line_value.contains("custom_id")) id = id_text(outer, line_value["custom_id"], "custom_id");
    else if (!batch && request.contains("id")) id = id_text(f, request["id"], "id");

    json input = json::object();
    const json& messages = f.any("messages");
    check_chat_messages(messages, f.where(), "messages");
    input["messages"] = messages;
    if (f.has_value("tools")) {
      check_tools(f, request["tools"]);
      input["tools"] = request["tools"];
    }
    if (f.has_value("tool_choice")) input["tool_choice"] = request["tool_choice"];
    if (f.has_value("parallel_tool_calls")) input["parallel_tool_calls"] = f.boolean("parallel_tool_calls");
    if (f.has_value("response_format")) {
      check_response_format(f, request["response_format"]);
      input["response_format"] = request["response_format"];
    }
    for (const char* key : {"max_tokens", "max_completion_tokens"}) {
      if (!f.has_value(key)) continue;
      const std::int64_t n = f.integer(key);
      if (n <= 0) f.fail(key, "must be a positive number of tokens");
      input["max_tokens"] = n;
    }
    if (!input.contains("max_tokens") && o.max_tokens) input["max_tokens"] = *o.max_tokens;
    if (f.has_value("stop")) {
      const json& stop = request["stop"];
      input["stop"] = stop.is_string() ? json::array({stop}) : stop;
    }
    for (const auto& [key, value] : request.items()) {
      if (input.contains(key) || key == "id" || key == "max_completion_tokens" || value.is_null()) continue;
      ignored.insert(key);  // sampling (model, temperature, seed, ...) and anything else not carried
    }
    const bool from_field = !id.empty();
    if (!from_field) id = hex64(hash64(input.dump(-1, ' ', false, json::error_handler_t::replace))).substr(0, 12);

    Trial t;
    t.id = "golden/" + id;
    t.task = "golden";
    t.bucket = 0;
    input["temperature"] = 0;  // golden prompts are compared output to output: greedy decoding
    t.input = std::move(input);
    t.target = nullptr;  // no reference answer: the baseline's output is the reference
    t.grader = {{"name", "golden"}};
    t.meta = {{"source_line", line}, {"temperature", 0}, {"id_from", from_field ? "field" : "hash"}, {"version", kVersion}};
    // The same checks every tasks file gets when it is read back (messages' roles and contents, stop).
    t = trial_from_json(to_json(t), where);
    auto [it, fresh] = seen.emplace(t.id, line);
    if (!fresh)
      throw Error(where + ": id \"" + t.id + "\" repeats line " + std::to_string(it->second) +
                  (from_field ? ": ids must be unique" : ": the same request twice; remove one or give each an \"id\""));
    result.trials.push_back(std::move(t));
  });
  if (result.trials.empty()) throw Error(o.prompts_path + ": no prompts: one JSON request per line, {\"messages\": [...]}");
  result.ignored_keys.assign(ignored.begin(), ignored.end());
  return result;
}

}  // namespace kvgate

#include "harness/core/result.h"

#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/jsonl.h"

namespace kvgate {

using nlohmann::json;

namespace {
const char* const kKnown[] = {"id",       "task",          "bucket",        "repeat",           "score",
                              "passed",   "error",         "response",      "reasoning",        "finish_reason",
                              "prompt_tokens", "completion_tokens", "latency_ms", "ttft_ms", "grade"};
bool is_known(const std::string& key) {
  for (const char* k : kKnown)
    if (key == k) return true;
  return false;
}
}  // namespace

json to_json(const ResultRecord& r) {
  json j = {{"id", r.id},         {"task", r.task},     {"bucket", r.bucket},
            {"repeat", r.repeat}, {"score", r.score},   {"passed", r.passed},
            {"error", r.error ? json(*r.error) : json(nullptr)}};
  j["response"] = r.response;
  if (!r.reasoning.empty()) j["reasoning"] = r.reasoning;
  j["finish_reason"] = r.finish_reason;
  j["prompt_tokens"] = r.prompt_tokens ? json(*r.prompt_tokens) : json(nullptr);
  j["completion_tokens"] = r.completion_tokens ? json(*r.completion_tokens) : json(nullptr);
  j["latency_ms"] = r.latency_ms ? json(*r.latency_ms) : json(nullptr);
  if (r.ttft_ms) j["ttft_ms"] = *r.ttft_ms;
  if (!r.grade.empty()) j["grade"] = r.grade;
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it)
    if (!is_known(it.key())) j[it.key()] = it.value();
  return j;
}

ResultRecord result_from_json(const json& j, const std::string& where) {
  FieldReader f(j, where);
  ResultRecord r;
  r.id = f.str("id");
  if (r.id.empty()) f.fail("id", "must not be empty");
  r.task = f.str("task");
  r.bucket = f.integer("bucket");
  std::int64_t repeat = f.integer("repeat");
  if (repeat < 0 || repeat > 1000000) f.fail("repeat", "must be between 0 and 1000000");
  r.repeat = static_cast<int>(repeat);
  r.score = f.number("score");
  if (r.score < 0.0 || r.score > 1.0) f.fail("score", "must be between 0 and 1, got " + std::to_string(r.score));
  r.passed = f.boolean("passed");
  if (!f.has("error")) f.fail("error", "missing (null for a trial that ran, or the error message)");
  r.error = f.opt_str("error");
  r.response = f.opt_str("response").value_or("");
  r.reasoning = f.opt_str("reasoning").value_or("");
  r.finish_reason = f.opt_str("finish_reason").value_or("");
  r.prompt_tokens = f.opt_integer("prompt_tokens");
  r.completion_tokens = f.opt_integer("completion_tokens");
  r.latency_ms = f.opt_number("latency_ms");
  r.ttft_ms = f.opt_number("ttft_ms");
  if (f.has_value("grade")) r.grade = f.object("grade");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!is_known(it.key())) r.extra[it.key()] = it.value();
  return r;
}

ResultsFile read_results(const std::string& path) {
  ResultsFile file;
  JsonlReadOptions opts;
  opts.allow_torn_tail = true;
  JsonlReadStats stats = for_each_jsonl(
      path,
      [&](json&& v, std::size_t line) { file.records.push_back(result_from_json(v, path + ":" + std::to_string(line))); },
      opts);
  file.torn_tail_bytes = stats.torn_tail_bytes;
  return file;
}

}  // namespace kvgate

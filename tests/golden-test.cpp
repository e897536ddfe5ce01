// datasets/golden: the prompts loader, the per-trial self-check, and baseline-vs-candidate breaks.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "datasets/graders.h"
#include "datasets/golden/golden_check.h"
#include "datasets/golden/golden_compare.h"
#include "datasets/golden/golden_prompts.h"
#include "tests/test_util.h"

using kvtest::Approx;
using kvtest::contains;
using nlohmann::json;

namespace {

const json kTools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
  {"type": "function", "function": {"name": "search"}}])");

json call(const std::string& name, const std::string& arguments, const std::string& id = "call_1") {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
}

kvgate::GoldenOutput out(std::string response, std::string finish = "stop", json tool_calls = nullptr) {
  return {.response = std::move(response), .finish_reason = std::move(finish), .tool_calls = std::move(tool_calls)};
}

std::vector<std::string> kinds(const kvgate::GoldenDiff& d) {
  std::vector<std::string> k;
  for (const auto& b : d.breaks) k.push_back(kvgate::to_string(b.kind));
  return k;
}

kvgate::GoldenGenResult load(const std::string& text) {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("prompts.jsonl"), text);
  return kvgate::make_golden_trials({.prompts_path = dir.file("prompts.jsonl"), .max_tokens = std::nullopt});
}

}  // namespace

TEST_CASE("golden: production requests become trials at temperature 0", "[golden][loader]") {
  const std::string text =
      R"({"id": "weather-1", "model": "prod-model", "temperature": 0.7, "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": )" +
      kTools.dump() + R"(, "tool_choice": "auto", "max_completion_tokens": 300})" "\n" +
      R"({"messages": [{"role": "system", "content": "Reply in JSON."}, {"role": "user", "content": "List 3 colors"}], "response_format": {"type": "json_object"}, "stop": "END"})" "\n" +
      R"({"custom_id": "batch-7", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 3}})" "\n";
  const kvgate::GoldenGenResult r = load(text);
  REQUIRE(r.trials.size() == 3);
  const kvgate::Trial& a = r.trials[0];
  CHECK(a.id == "golden/weather-1");
  CHECK(a.task == "golden");
  CHECK(a.grader == json({{"name", "golden"}}));
  CHECK(a.input["temperature"] == 0);
  CHECK(a.meta["temperature"] == 0);
  CHECK(a.input["tools"] == kTools);
  CHECK(a.input["tool_choice"] == "auto");
  CHECK(a.input["max_tokens"] == 300);
  CHECK_FALSE(a.input.contains("model"));
  CHECK(a.meta["id_from"] == "field");
  CHECK(a.meta["source_line"] == 1);
  const kvgate::Trial& b = r.trials[1];
  CHECK(b.id.rfind("golden/", 0) == 0);
  CHECK(b.id.size() == std::string("golden/").size() + 12);
  CHECK(b.meta["id_from"] == "hash");
  CHECK(b.input["stop"] == json::array({"END"}));
  CHECK(b.input["response_format"]["type"] == "json_object");
  CHECK(r.trials[2].id == "golden/batch-7");
  CHECK(r.ignored_keys == std::vector<std::string>{"model", "seed", "temperature"});

  // Hash ids depend on the request only: not on its line, key order, or the sampling keys dropped.
  const kvgate::GoldenGenResult moved = load(
      "{\"messages\": [{\"role\": \"user\", \"content\": \"other\"}]}\n"
      R"({"stop": "END", "temperature": 1.0, "response_format": {"type": "json_object"}, "messages": [{"content": "Reply in JSON.", "role": "system"}, {"role": "user", "content": "List 3 colors"}]})" "\n");
  CHECK(moved.trials[1].id == b.id);
  CHECK(moved.trials[0].id != b.id);
  // --max-tokens fills in only where a request has none.
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("p.jsonl"), "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}\n"
                                          "{\"messages\": [{\"role\": \"user\", \"content\": \"y\"}], \"max_tokens\": 9}\n");
  const auto filled = kvgate::make_golden_trials({.prompts_path = dir.file("p.jsonl"), .max_tokens = 64});
  CHECK(filled.trials[0].input["max_tokens"] == 64);
  CHECK(filled.trials[1].input["max_tokens"] == 9);
}

TEST_CASE("golden: malformed prompt files are named by line", "[golden][loader]") {
  const std::string user = R"({"role": "user", "content": "x"})";
  struct Bad {
    std::string text;
    std::string message;
  };
  const Bad bad[] = {
      {"[1]", ":1: expected a JSON object"},
      {"{\"prompt\": \"x\"}", ":1: field \"messages\" missing"},
      {"{\"messages\": []}", ":1: field \"messages\" is empty"},
      {"{\"messages\": [{\"content\": \"x\"}]}", ":1: field \"messages\"[0] must be an object with a \"role\""},
      {"{\"messages\": [{\"role\": \"user\"}]}", ":1: field \"messages\"[0] has no \"content\""},
      {"{\"messages\": [" + user + "], \"tools\": [{\"type\": \"function\", \"function\": {}}]}", ":1: field \"tools\" [0].function has no \"name\""},
      {"{\"messages\": [" + user + "], \"tools\": " + json::array({kTools[0], kTools[0]}).dump() + "}", "offered twice"},
      {"{\"messages\": [" + user + "], \"response_format\": {\"type\": \"xml\"}}", "type \"xml\" is not one of"},
      {"{\"messages\": [" + user + "], \"response_format\": {\"type\": \"json_schema\"}}", "needs a \"json_schema\" object"},
      {"{\"messages\": [" + user + "], \"max_tokens\": 0}", "field \"max_tokens\" must be a positive"},
      {"{\"id\": \"a\", \"messages\": [" + user + "]}\n{\"id\": \"a\", \"messages\": [" + user + "]}", ":2: id \"golden/a\" repeats line 1"},
      {"{\"messages\": [" + user + "]}\n\n{\"messages\": [" + user + "]}", ":3: id \"golden/"},
      {"{\"id\": {}, \"messages\": [" + user + "]}", "field \"id\" must be a non-empty string or an integer"},
      {"{\"custom_id\": \"c\", \"url\": \"/v1/embeddings\", \"body\": {\"input\": \"x\"}}", "golden prompts are chat requests"},
      {"", "no prompts"},
  };
  for (const Bad& b : bad) {
    INFO(b.text);
    REQUIRE_THROWS_WITH(load(b.text), contains(b.message) && contains("prompts.jsonl"));
  }
  REQUIRE_THROWS_WITH(load("{\"messages\": [" + user + "]}\n{\"messages\": [" + user + "]}"), contains("give each an \"id\""));
}

TEST_CASE("golden: the self-check grader flags each structural problem", "[golden][grader]") {
  kvgate::Trial t;
  t.id = "golden/x";
  t.task = "golden";
  t.input = {{"messages", json::array({{{"role", "user"}, {"content", "x"}}})}, {"tools", kTools}};
  t.target = nullptr;
  t.grader = {{"name", "golden"}};
  kvgate::Trial json_trial = t;
  json_trial.input["response_format"] = {{"type", "json_object"}};
  struct Case {
    const kvgate::Trial* trial;
    std::string response;
    std::string finish;
    json tool_calls;
    std::vector<std::string> problems;
  };
  const Case cases[] = {
      {&t, "Sunny, 21 C.", "stop", nullptr, {}},
      {&t, "", "stop", nullptr, {"empty"}},
      {&t, "  \n", "stop", nullptr, {"empty"}},
      {&t, "<think>long reasoning</think>", "stop", nullptr, {"empty"}},
      {&t, "The weather in Par", "length", nullptr, {"truncated"}},
      {&t, "", "length", nullptr, {"empty", "truncated"}},
      {&json_trial, R"({"colors": ["red", "green", "blue"]})", "stop", nullptr, {}},
      {&json_trial, "```json\n{\"colors\": [\"red\"]}\n```", "stop", nullptr, {}},
      {&json_trial, R"({"colors": ["red", "green")", "stop", nullptr, {"invalid_json"}},
      {&json_trial, "Here are three colors: red, green, blue.", "stop", nullptr, {"invalid_json"}},
      {&json_trial, "<think>{not json</think>{\"ok\": true}", "stop", nullptr, {}},
      {&t, "", "tool_calls", json::array({call("get_weather", R"({"city": "Paris"})")}), {}},
      {&t, "", "tool_calls", json::array({call("get_weather", R"({"city": "Par)")}), {"tool_call_unparseable"}},
      {&t, "", "tool_calls", json::array({call("get_weather", "[1, 2]")}), {"tool_call_unparseable"}},
      {&t, "", "tool_calls", json::array({call("delete_files", "{}")}), {"tool_call_unknown_tool"}},
      {&t, "", "tool_calls", json::array({{{"id", "c"}, {"type", "function"}, {"function", {{"arguments", "{}"}}}}}), {"tool_call_unparseable"}},
      {&t, "", "tool_calls", json({{"not", "an array"}}), {"empty", "tool_call_unparseable"}},
  };
  for (const Case& c : cases) {
    INFO(c.response << " | " << c.finish << " | " << c.tool_calls.dump());
    kvgate::GradeInput in{*c.trial, c.response};
    in.finish_reason = c.finish;
    in.tool_calls = c.tool_calls.is_null() ? nullptr : &c.tool_calls;
    const kvgate::Grade g = kvgate::grade_trial(in);
    std::vector<std::string> got;
    for (const json& p : g.details["problems"]) got.push_back(p["kind"]);
    CHECK(got == c.problems);
    CHECK(g.passed == c.problems.empty());
    CHECK(g.score == (c.problems.empty() ? 1.0 : 0.0));
  }
  kvgate::GradeInput in{json_trial, ""};
  const kvgate::Grade g = kvgate::grade_trial(in);
  CHECK(g.value == kvgate::GradeValue::no_answer);
  CHECK(g.details["request"] == json({{"json_requested", true}, {"tools", {"get_weather", "search"}}}));
  CHECK(kvgate::golden_request_from_json(g.details["request"], "x").tool_names.size() == 2);
  REQUIRE_THROWS_WITH(kvgate::golden_request_from_json(json::object(), "run/results.jsonl:3"), contains("run/results.jsonl:3"));
}

TEST_CASE("golden: each kind of break of the candidate against the baseline", "[golden][compare]") {
  const kvgate::GoldenRequest plain{.json_requested = false, .tool_names = {"get_weather", "search"}};
  const kvgate::GoldenRequest wants_json{.json_requested = true, .tool_names = {}};
  const json good_call = json::array({call("get_weather", R"({"city": "Paris"})")});
  struct Case {
    const char* why;
    kvgate::GoldenRequest request;
    kvgate::GoldenOutput baseline, candidate;
    std::vector<std::string> breaks;
  };
  const Case cases[] = {
      {"identical", plain, out("Sunny."), out("Sunny."), {}},
      {"different words are no break", plain, out("Sunny."), out("It is sunny."), {}},
      {"empty", plain, out("Sunny."), out(""), {"empty"}},
      {"empty in both", plain, out(""), out(""), {}},
      {"truncated", plain, out("Sunny."), out("Sun", "length"), {"truncated"}},
      {"truncated in both", plain, out("Sun", "length"), out("Su", "length"), {}},
      {"requested JSON broken", wants_json, out(R"({"a": 1})"), out(R"({"a": 1)"), {"invalid_json"}},
      {"requested JSON broken in both", wants_json, out("not json"), out("still not json"), {"invalid_json"}},
      {"unrequested JSON no longer JSON", plain, out(R"({"a": 1})"), out("a is 1"), {"invalid_json"}},
      {"unrequested fenced JSON stays JSON", plain, out("```json\n[1]\n```"), out("[1, 2]"), {}},
      {"tool call arguments broken", plain, out("", "tool_calls", good_call),
       out("", "tool_calls", json::array({call("get_weather", R"({"city": )")})), {"tool_call_unparseable"}},
      {"unknown tool", plain, out("", "tool_calls", good_call), out("", "tool_calls", json::array({call("get_wether", "{}")})),
       {"tool_call_unknown_tool"}},
      {"tool call dropped", plain, out("", "tool_calls", good_call), out("I will check the weather.", "stop"), {"tool_call_dropped"}},
      {"several at once", wants_json, out(R"({"a": 1})"), out(R"({"a": )", "length"), {"truncated", "invalid_json"}},
  };
  for (const Case& c : cases) {
    INFO(c.why);
    const kvgate::GoldenDiff d = kvgate::compare_golden(c.request, c.baseline, c.candidate);
    CHECK(kinds(d) == c.breaks);
  }
  // Results without the grader's details: the offered tools are unknown, so no tool is "unknown".
  const kvgate::GoldenRequest unknown{.json_requested = false, .tool_names = {}, .tools_known = false};
  CHECK(kinds(kvgate::compare_golden(unknown, out("", "tool_calls", good_call), out("", "tool_calls", json::array({call("x", "{}")})))).empty());
  const kvgate::GoldenDiff shared = kvgate::compare_golden(wants_json, out("nope"), out("nah"));
  REQUIRE(shared.breaks.size() == 1);
  CHECK(shared.breaks[0].in_baseline);
  CHECK_FALSE(kvgate::compare_golden(wants_json, out("{}"), out("nah")).breaks[0].in_baseline);

  // Exact match ignores tool call ids and argument spacing; edit distance is over code points.
  const kvgate::GoldenDiff same_call = kvgate::compare_golden(
      plain, out("", "tool_calls", good_call), out("", "tool_calls", json::array({call("get_weather", R"({ "city":"Paris" })", "call_9")})));
  CHECK(same_call.exact_match);
  CHECK(same_call.edit_distance == 0.0);
  const kvgate::GoldenDiff other_city = kvgate::compare_golden(
      plain, out("", "tool_calls", good_call), out("", "tool_calls", json::array({call("get_weather", R"({"city": "Lyon"})")})));
  CHECK_FALSE(other_city.exact_match);
  CHECK(other_city.edit_distance > 0.0);
  const kvgate::GoldenDiff near = kvgate::compare_golden(plain, out("<think>a</think>abcd"), out("abcx"));
  CHECK_FALSE(near.exact_match);
  CHECK(near.edit_distance == Approx(0.25));
  CHECK(kvgate::compare_golden(plain, out("<think>a</think>same"), out("<think>b</think>same")).exact_match);
  CHECK(kvgate::to_json(near)["edit_distance"] == Approx(0.25));
}

TEST_CASE("golden: the summary counts breaks and fails the gate on any by default", "[golden][compare]") {
  const kvgate::GoldenRequest wants_json{.json_requested = true, .tool_names = {}};
  std::vector<kvgate::GoldenDiff> diffs = {
      kvgate::compare_golden(wants_json, out("{}"), out("{}")),
      kvgate::compare_golden(wants_json, out(R"({"a": 1})"), out(R"({"a": 2})")),
      kvgate::compare_golden(wants_json, out("nope"), out("nah")),  // shared with the baseline
  };
  const kvgate::GoldenSummary s = kvgate::summarize_golden(diffs);
  CHECK(s.prompts == 3);
  CHECK(s.exact_matches == 1);
  CHECK(s.exact_match_rate == Approx(1.0 / 3));
  CHECK(s.breaks == 1);
  CHECK(s.prompts_with_breaks == 1);
  CHECK(s.breaks_by_kind == std::map<std::string, std::size_t>{{"invalid_json", 1}});
  CHECK(s.gate_failed);
  CHECK_FALSE(kvgate::summarize_golden(diffs, {.max_breaks = 0, .ignore_breaks_in_baseline = true}).gate_failed);
  CHECK_FALSE(kvgate::summarize_golden(diffs, {.max_breaks = 1, .ignore_breaks_in_baseline = false}).gate_failed);
  CHECK_FALSE(kvgate::summarize_golden({}).gate_failed);
  const json j = kvgate::to_json(s);
  CHECK(j["gate_failed"] == true);
  CHECK(j["breaks_by_kind"]["invalid_json"] == 1);
}

TEST_CASE("golden: outputs come from results lines, tool calls from the extra field", "[golden][compare]") {
  kvgate::ResultRecord r;
  r.id = "golden/a";
  r.response = "";
  r.finish_reason = "tool_calls";
  r.extra["tool_calls"] = json::array({call("search", R"({"q": "x"})")});
  const kvgate::GoldenOutput o = kvgate::golden_output_from_result(r);
  CHECK(o.finish_reason == "tool_calls");
  CHECK(kvgate::tool_call_count(o.tool_calls) == 1);
  CHECK(kvgate::render_golden_output(o) == "\n<tool_call> search {\"q\":\"x\"}");
  kvgate::ResultRecord none;
  CHECK(kvgate::golden_output_from_result(none).tool_calls.is_null());
}

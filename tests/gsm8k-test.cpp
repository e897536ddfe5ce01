// datasets/gsm8k: lm-eval's extraction and exact_match, the loader, the download, prompts, the grader.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/sha256.h"
#include "datasets/graders.h"
#include "datasets/gsm8k/gsm8k_data.h"
#include "datasets/gsm8k/gsm8k_extract.h"
#include "datasets/gsm8k/gsm8k_prompts.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using kvtest::contains;
using nlohmann::json;

namespace {

struct ExtractCase {
  const char* why;
  const char* response;
  const char* target;
  const char* strict;  // extracted by strict-match
  bool strict_ok;
  const char* flexible;  // extracted by flexible-extract
  bool flexible_ok;
  bool flexible_numeric_ok;
};

// Hand-made responses; the expected values follow lm-eval's regexes and exact_match (and are checked
// against Python's re running lm-eval's filter code below).
const ExtractCase kCases[] = {
    {"worked answer", "48/2 = 24 in May.\n48+24 = 72 in all.\n#### 72", "... #### 72", "72", true, "72", true, true},
    {"negative", "It fell to -5 degrees.\n#### -5", "#### -5", "-5", true, "-5", true, true},
    {"decimal, trailing zero", "Each costs 2.50\n#### 2.50", "2.5", "2.50", false, "2.50", false, true},
    {"thousands comma", "He earns 1,200 dollars.\n#### 1,200", "1200", "1,200", true, "1,200", true, true},
    {"currency, no ####", "The total is $18.", "18", "[invalid]", false, "$18.", true, true},
    {"currency after ####", "#### $18", "18", "[invalid]", false, "$18", true, true},
    {"several numbers, last right", "3 apples, then 5 more: 3 + 5 = 8 apples.", "8", "[invalid]", false, "8", true, true},
    {"several numbers, last wrong", "The answer is 8. Check: 8 * 2 = 16", "8", "[invalid]", false, "16", false, false},
    {"no number", "I cannot solve this.", "7", "[invalid]", false, "[invalid]", false, false},
    {"empty", "", "7", "[invalid]", false, "[invalid]", false, false},
    {"trailing period after ####", "#### 72.", "72", "72.", true, "72.", true, true},
    {"strict takes the first ####", "#### 5\n#### 7", "7", "5", false, "7", true, true},
    {"single digit", "x is 7", "7", "[invalid]", false, "7", true, true},
    {"#### without a space", "####72", "72", "[invalid]", false, "72", true, true},
    {"ellipsis keeps two dots", "about 3.14159...", "3.14159", "[invalid]", false, "3.14159...", false, false},
    {"negative currency", "She lost -$5 overall", "-5", "[invalid]", false, "-$5", true, true},
    {"currency with cents", "#### 1,234.56", "$1,234.56", "1,234.56", true, "1,234.56", true, true},
    {"comma after the number", "I have 5, you have 6, total 11, done", "11", "[invalid]", false, "11,", true, true},
    {"fraction", "It is 3/4 of the cake", "0.75", "[invalid]", false, "4", false, false},
    {"period then newline", "So she pays 18.\n", "18", "[invalid]", false, "18.", true, true},
    {"leading zeros", "#### 007", "7", "007", false, "007", false, true},
    {"72.0 is not 72 for exact_match", "#### 72.0", "72", "72.0", false, "72.0", false, true},
    {"a lone minus", "a - b", "1", "[invalid]", false, "[invalid]", false, false},
    {"non-ASCII digits", "\xD9\xA7\xD9\xA2", "72", "[invalid]", false, "[invalid]", false, false},
};

std::string python() {
  if (const char* p = std::getenv("KVGATE_PYTHON"); p && *p) return p;
  for (const char* p : {".venv-tests/bin/python", "/usr/bin/python3", "/usr/local/bin/python3"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// lm-eval's RegexFilter.apply and exact_match (lm_eval/filters/extraction.py, api/metrics.py),
// restated for one response.
const char* kLmEvalPython = R"PY(
import json, re, sys
def regex_filter(pattern, group_select, resp, fallback="[invalid]"):
    match = re.compile(pattern).findall(resp)
    if match:
        match = match[group_select]
        if isinstance(match, tuple):
            match = [m for m in match if m]
            match = match[0] if match else fallback
        match = match.strip()
    else:
        match = fallback
    return match
def exact_match(pred, ref):
    for s in [",", "\\$", "(?s).*#### ", "\\.$"]:
        pred = re.sub(s, "", pred)
        ref = re.sub(s, "", ref)
    return pred.lower() == ref.lower()
out = []
for case in json.load(open(sys.argv[1])):
    s = regex_filter(case["strict_regex"], 0, case["response"])
    f = regex_filter("(-?[$0-9.,]{2,})|(-?[0-9]+)", -1, case["response"])
    out.append([s, exact_match(s, case["target"]), f, exact_match(f, case["target"])])
json.dump(out, open(sys.argv[2], "w"))
)PY";

kvgate::Trial gsm8k_trial(json target, json params = json::object()) {
  kvgate::Trial t;
  t.id = "gsm8k/0001";
  t.task = "gsm8k";
  t.input = {{"prompt", "?"}};
  t.target = std::move(target);
  t.grader = params;
  t.grader["name"] = "gsm8k";
  return t;
}

std::string gsm8k_file(const char* file) { return kvtest::data_dir() + "/gsm8k/" + file; }

}  // namespace

TEST_CASE("gsm8k: extraction and exact_match on hand-made responses", "[gsm8k]") {
  for (const ExtractCase& c : kCases) {
    INFO(c.why << ": response=\"" << c.response << "\" target=\"" << c.target << "\"");
    const kvgate::Gsm8kScores s = kvgate::score_gsm8k(c.response, c.target);
    CHECK(s.strict.extracted == c.strict);
    CHECK(s.strict.correct == c.strict_ok);
    CHECK(s.flexible.extracted == c.flexible);
    CHECK(s.flexible.correct == c.flexible_ok);
    CHECK(s.flexible.numeric_correct == c.flexible_numeric_ok);
  }
  // gsm8k-cot's strict pattern ends in an unescaped `.` (any character): lm-eval's quirks kept.
  CHECK(kvgate::gsm8k_extract_strict("The answer is 18.", kvgate::kGsm8kCotStrictRegex) == "18");
  CHECK(kvgate::gsm8k_extract_strict("The answer is 18", kvgate::kGsm8kCotStrictRegex) == "1");
  CHECK(kvgate::gsm8k_extract_strict("The answer is $18.", kvgate::kGsm8kCotStrictRegex) == "[invalid]");
  CHECK(kvgate::gsm8k_normalize("Natalia ... #### 1,000.") == "1000");
  CHECK(kvgate::gsm8k_normalize("[INVALID]") == "[invalid]");
}

TEST_CASE("gsm8k: the table and every train solution agree with Python's re running lm-eval's filter", "[gsm8k][python]") {
  const std::string py = python();
  if (py.empty()) FAIL("no Python found for the cross-check: run scripts/setup (or set KVGATE_PYTHON)");
  json cases = json::array();
  for (const ExtractCase& c : kCases)
    cases.push_back({{"response", c.response}, {"target", c.target}, {"strict_regex", kvgate::kGsm8kStrictRegex}});
  // Real number formats: every train solution, whole and with its "#### N" line cut off, and a
  // gsm8k-cot style ending; targets from a neighbouring problem as often as not.
  const kvgate::Gsm8kFile train = kvgate::load_gsm8k(gsm8k_file("train.jsonl"));
  for (std::size_t i = 0; i < train.problems.size(); ++i) {
    const auto& p = train.problems[i];
    const std::string& other = train.problems[(i + 1) % train.problems.size()].answer;
    cases.push_back({{"response", p.answer}, {"target", i % 2 ? p.answer : other}, {"strict_regex", kvgate::kGsm8kStrictRegex}});
    const std::string cut = p.answer.substr(0, p.answer.rfind("####"));
    cases.push_back({{"response", cut}, {"target", p.answer}, {"strict_regex", kvgate::kGsm8kStrictRegex}});
    cases.push_back({{"response", cut + " The answer is " + p.final_answer + (i % 3 ? "." : "")},
                     {"target", p.final_answer},
                     {"strict_regex", kvgate::kGsm8kCotStrictRegex}});
  }
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("cases.json"), cases.dump());
  kvtest::write_text(dir.file("lm_eval_filter.py"), kLmEvalPython);
  const std::string cmd = py + " " + dir.file("lm_eval_filter.py") + " " + dir.file("cases.json") + " " + dir.file("out.json") +
                          " 2> " + dir.file("err.txt");
  const int rc = std::system(cmd.c_str());
  INFO(kvtest::read_text(dir.file("err.txt")));
  REQUIRE(rc == 0);
  const json expected = json::parse(kvtest::read_text(dir.file("out.json")));
  REQUIRE(expected.size() == cases.size());
  std::size_t agree = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string response = cases[i]["response"], target = cases[i]["target"], strict_regex = cases[i]["strict_regex"];
    const kvgate::Gsm8kScores s = kvgate::score_gsm8k(response, target, {.strict = strict_regex});
    INFO("case " << i << ": " << response.substr(0, 200));
    REQUIRE(s.strict.extracted == expected[i][0].get<std::string>());
    REQUIRE(s.strict.correct == expected[i][1].get<bool>());
    REQUIRE(s.flexible.extracted == expected[i][2].get<std::string>());
    REQUIRE(s.flexible.correct == expected[i][3].get<bool>());
    ++agree;
  }
  CHECK(agree == std::size(kCases) + 3 * train.problems.size());
}

TEST_CASE("gsm8k: the loader reads the official files and names bad lines", "[gsm8k][loader]") {
  const kvgate::Gsm8kFile test = kvgate::load_gsm8k(gsm8k_file("test.jsonl"));
  CHECK(test.problems.size() == 1319);
  CHECK(test.sha256 == kvgate::gsm8k_split("test").sha256);
  CHECK(test.problems[0].final_answer == "18");
  CHECK(test.problems[1318].index == 1318);
  CHECK(kvgate::load_gsm8k(gsm8k_file("train.jsonl")).sha256 == kvgate::gsm8k_split("train").sha256);

  kvtest::TempDir dir;
  const std::string good = R"({"question": "q1", "answer": "a\n#### 1"})";
  struct Bad {
    std::string text;
    std::string message;
  };
  const Bad bad[] = {
      {good + "\n{oops\n", ":2: not valid JSON"},
      {good + "\n" + good + "\n[1, 2]\n", ":3: not a JSON object"},
      {R"({"question": "q"})", ":1: field \"answer\" missing"},
      {R"({"question": 5, "answer": "#### 1"})", ":1: field \"question\" must be a string"},
      {good + "\n\n" + R"({"question": "q", "answer": "no final answer"})", ":3: field \"answer\" has no final answer after \"####\""},
      {R"({"question": "  ", "answer": "#### 1"})", ":1: field \"question\" is empty"},
      {"", "no problems"},
  };
  for (const Bad& b : bad) {
    INFO(b.text);
    const std::string path = dir.file("bad.jsonl");
    kvtest::write_text(path, b.text);
    REQUIRE_THROWS_WITH(kvgate::load_gsm8k(path), contains(b.message) && contains(path));
  }
  REQUIRE_THROWS_WITH(kvgate::load_gsm8k(dir.file("absent.jsonl")), contains("absent.jsonl"));
  kvtest::write_text(dir.file("blank.jsonl"), good + "\n\n" + good + "\n");
  CHECK(kvgate::load_gsm8k(dir.file("blank.jsonl")).problems.size() == 2);
}

TEST_CASE("gsm8k: download into the cache, checked by sha256; clear errors when offline or corrupt", "[gsm8k][download]") {
  const std::string official = kvtest::read_text(gsm8k_file("test.jsonl"));
  std::atomic<int> requests{0};
  bool corrupt = false;
  kvtest::LocalServer server;
  server.server.Get("/data/test.jsonl", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.set_content(corrupt ? official.substr(0, official.size() - 10) : official, "application/json");
  });
  server.start();
  kvtest::TempDir cache;
  kvgate::Gsm8kFetchOptions o{.base_url = server.url("/data/"), .cache = cache.path(), .http = {.timeout_s = 10, .max_retries = 0, .headers = {}}};

  const std::string path = kvgate::fetch_gsm8k_split("test", o);
  CHECK(path == cache.path() + "/test.jsonl");
  CHECK(kvgate::sha256_file(path) == kvgate::gsm8k_split("test").sha256);
  CHECK(requests == 1);
  CHECK(kvgate::fetch_gsm8k_split("test", o) == path);  // from the cache
  CHECK(requests == 1);

  // A cached file that changed is fetched again; a corrupt download is refused and writes nothing.
  kvtest::write_text(path, "tampered\n");
  corrupt = true;
  REQUIRE_THROWS_WITH(kvgate::fetch_gsm8k_split("test", o), contains("sha256") && contains("does not match"));
  CHECK(kvtest::read_text(path) == "tampered\n");
  corrupt = false;
  CHECK(kvgate::sha256_file(kvgate::fetch_gsm8k_split("test", o)) == kvgate::gsm8k_split("test").sha256);

  // Offline: nothing listens there.
  kvtest::TempDir empty;
  kvgate::Gsm8kFetchOptions offline{.base_url = "http://127.0.0.1:1/x", .cache = empty.path(), .http = {.timeout_s = 5, .max_retries = 0, .headers = {}}};
  REQUIRE_THROWS_WITH(kvgate::fetch_gsm8k_split("train", offline),
                      contains("cannot get the train split") && contains("Offline?") && contains("--train"));
  REQUIRE_THROWS_WITH(kvgate::fetch_gsm8k_split("dev", offline), contains("unknown split \"dev\""));
}

TEST_CASE("gsm8k: lm-eval prompt, 5 shots per problem, stop strings, seeded", "[gsm8k][prompts]") {
  const kvgate::Gsm8kFile test = kvgate::load_gsm8k(gsm8k_file("test.jsonl"));
  const kvgate::Gsm8kFile train = kvgate::load_gsm8k(gsm8k_file("train.jsonl"));
  const auto trials = kvgate::make_gsm8k_trials(test, train, {.seed = 3, .limit = 20});
  REQUIRE(trials.size() == 20);
  std::set<std::string> shot_sets;
  for (const kvgate::Trial& t : trials) {
    const std::size_t index = t.meta["dataset_index"];
    CHECK(t.id == "gsm8k/" + std::string(4 - std::to_string(index).size(), '0') + std::to_string(index));
    CHECK(t.task == "gsm8k");
    CHECK(t.target == test.problems[index].answer);
    CHECK(t.input["stop"] == json({"Question:", "</s>", "<|im_end|>"}));
    CHECK(t.input["max_tokens"] == 256);
    CHECK(t.grader["name"] == "gsm8k");
    CHECK(t.grader["strict_regex"] == kvgate::kGsm8kStrictRegex);
    CHECK(t.grader["primary"] == "strict");
    const json shots = t.meta["fewshot_train_indices"];
    REQUIRE(shots.size() == 5);
    std::string want;
    for (std::size_t s : shots) want += "Question: " + train.problems[s].question + "\nAnswer: " + train.problems[s].answer + "\n\n";
    want += "Question: " + test.problems[index].question + "\nAnswer:";
    CHECK(t.input["prompt"] == want);
    shot_sets.insert(shots.dump());
  }
  CHECK(shot_sets.size() == 20);  // drawn per problem, as lm-eval does

  // Deterministic; another seed changes the subset and the shots; a bigger limit keeps each trial.
  CHECK(kvgate::make_gsm8k_trials(test, train, {.seed = 3, .limit = 20})[7].input == trials[7].input);
  CHECK(kvgate::make_gsm8k_trials(test, train, {.seed = 4, .limit = 20})[0].id != trials[0].id);
  const auto more = kvgate::make_gsm8k_trials(test, train, {.seed = 3, .limit = 60});
  for (const kvgate::Trial& t : trials) {
    auto it = std::find_if(more.begin(), more.end(), [&](const kvgate::Trial& m) { return m.id == t.id; });
    REQUIRE(it != more.end());
    CHECK(it->input == t.input);
  }
  CHECK(kvgate::make_gsm8k_trials(test, train, {}).size() == 1319);
}

TEST_CASE("gsm8k: gsm8k-cot shots from train, and the chat zero-shot prompt", "[gsm8k][prompts]") {
  const kvgate::Gsm8kFile test = kvgate::load_gsm8k(gsm8k_file("test.jsonl"));
  const kvgate::Gsm8kFile train = kvgate::load_gsm8k(gsm8k_file("train.jsonl"));
  kvgate::Gsm8kProblem p;
  p.answer = "He sprints 3*3=<<3*3=9>>9 times\nSo he runs 9*60=<<9*60=540>>540 meters\n#### 540";
  p.final_answer = "540";
  CHECK(kvgate::gsm8k_cot_solution(p) == "He sprints 3*3=9 times. So he runs 9*60=540 meters. The answer is 540.");

  const auto cot = kvgate::make_gsm8k_trials(test, train, {.style = kvgate::Gsm8kStyle::cot, .limit = 5});
  for (const kvgate::Trial& t : cot) {
    CHECK(t.meta["fewshot_train_indices"] == cot[0].meta["fewshot_train_indices"]);  // the same 8 exemplars
    CHECK(t.meta["fewshot_train_indices"].size() == 8);
    const std::string prompt = t.input["prompt"];
    CHECK(prompt.rfind("Q: ", 0) == 0);
    CHECK(prompt.find("<<") == std::string::npos);
    CHECK(prompt.size() > 4);
    CHECK(prompt.substr(prompt.size() - 3) == "\nA:");
    CHECK(t.input["stop"] == json({"Q:", "</s>", "<|im_end|>"}));
    CHECK(t.grader["strict_regex"] == kvgate::kGsm8kCotStrictRegex);
  }
  const std::string first = cot[0].input["prompt"];
  std::size_t answers = 0;
  for (std::size_t at = 0; (at = first.find(". The answer is ", at)) != std::string::npos; ++at) ++answers;
  CHECK(answers == 8);

  const auto chat = kvgate::make_gsm8k_trials(test, train, {.style = kvgate::Gsm8kStyle::chat, .limit = 3, .system = "Be brief."});
  for (const kvgate::Trial& t : chat) {
    REQUIRE(t.is_chat());
    const json& m = t.input["messages"];
    REQUIRE(m.size() == 2);
    CHECK(m[0] == json({{"role", "system"}, {"content", "Be brief."}}));
    const std::size_t index = t.meta["dataset_index"];
    CHECK(m[1]["content"] == test.problems[index].question + "\n\n" + kvgate::kGsm8kChatInstruction);
    CHECK_FALSE(t.input.contains("stop"));
    CHECK_FALSE(t.input.contains("max_tokens"));
  }
  CHECK(std::string(kvgate::kGsm8kChatInstruction).find("put the final answer") != std::string::npos);

  REQUIRE_THROWS_WITH(kvgate::make_gsm8k_trials(test, train, {.style = kvgate::Gsm8kStyle::chat, .num_fewshot = 2}),
                      contains("zero-shot"));
  REQUIRE_THROWS_WITH(kvgate::make_gsm8k_trials(test, train, {.system = "x"}), contains("--system"));
  REQUIRE_THROWS_WITH(kvgate::make_gsm8k_trials(test, train, {.primary = "loose"}), contains("--primary"));
  REQUIRE_THROWS_WITH(kvgate::make_gsm8k_trials(test, kvgate::Gsm8kFile{}, {}), contains("--num-fewshot 5"));
  REQUIRE_THROWS_WITH(kvgate::parse_gsm8k_style("mmlu"), contains("gsm8k, gsm8k-cot, chat"));
}

TEST_CASE("gsm8k: the grader removes thinking, scores empty as wrong, reports both filters", "[gsm8k][grader]") {
  const json answer = "She sells 9 eggs.\n#### 18";
  struct Case {
    const char* response;
    json params;
    bool passed;
    kvgate::GradeValue value;
    const char* extracted;
  };
  const Case cases[] = {
      {"9*2 = 18\n#### 18", json::object(), true, kvgate::GradeValue::correct, "18"},
      {"<think>Maybe #### 17? No.</think>\n#### 18", json::object(), true, kvgate::GradeValue::correct, "18"},
      {"<think>#### 18</think>I am not sure.", json::object(), false, kvgate::GradeValue::no_answer, "[invalid]"},
      {"<think>out of tokens while thinking #### 18", json::object(), false, kvgate::GradeValue::no_answer, "[invalid]"},
      {"", json::object(), false, kvgate::GradeValue::no_answer, "[invalid]"},
      {"She makes $18.", json::object(), false, kvgate::GradeValue::no_answer, "[invalid]"},
      {"She makes $18.", {{"primary", "flexible"}}, true, kvgate::GradeValue::correct, "$18."},
      {"#### 17", json::object(), false, kvgate::GradeValue::incorrect, "17"},
  };
  for (const Case& c : cases) {
    INFO(c.response << " " << c.params.dump());
    const kvgate::Trial t = gsm8k_trial(answer, c.params);
    const kvgate::Grade g = kvgate::grade_trial({t, c.response});
    CHECK(g.passed == c.passed);
    CHECK(g.score == (c.passed ? 1.0 : 0.0));
    CHECK(g.value == c.value);
    CHECK(g.extracted == c.extracted);
    CHECK(g.details.contains("strict"));
    CHECK(g.details.contains("flexible"));
  }
  // The reasoning field is never graded: an answer only there is no answer.
  const kvgate::Trial t = gsm8k_trial(answer);
  kvgate::GradeInput in{t, ""};
  in.reasoning = "#### 18";
  CHECK_FALSE(kvgate::grade_trial(in).passed);
  const kvgate::Grade g = kvgate::grade_trial({t, "<think>x</think>#### 18.0"});
  CHECK(g.details["strict"] == json({{"extracted", "18.0"}, {"correct", false}, {"numeric_correct", true}}));
  CHECK(g.details["thinking_removed"] == true);
  CHECK(g.details["primary"] == "strict");
  CHECK(kvgate::grade_trial({gsm8k_trial(18), "#### 18"}).passed);  // a number target
  REQUIRE_THROWS_WITH(kvgate::grade_trial({gsm8k_trial(answer, {{"primary", "x"}}), "1"}), contains("primary"));
}

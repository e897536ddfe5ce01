// datasets/custom: gen custom's field mapping, templates, ids and their errors.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "datasets/custom/custom_gen.h"
#include "datasets/custom/template.h"
#include "tests/test_util.h"

using kvtest::contains;
using nlohmann::json;

namespace {

std::vector<kvgate::CustomRow> rows_of(const std::string& text, kvtest::TempDir& dir) {
  kvtest::write_text(dir.file("data.jsonl"), text);
  return kvgate::read_custom_rows(dir.file("data.jsonl"));
}

kvgate::CustomGenOptions qa() {
  kvgate::CustomGenOptions o;
  o.input_field = "question";
  o.target_field = "answer";
  return o;
}

const char* kData =
    R"({"id": "q1", "question": "What is 2+2?", "answer": "4", "options": ["3", "4"], "letter": "B"})" "\n"
    R"({"id": "q2", "question": "Capital of France?", "answer": "Paris", "options": ["Paris", "Lyon"], "letter": "A"})" "\n"
    R"({"id": 7, "question": "Largest planet?", "answer": "Jupiter", "options": ["Mars", "Jupiter"], "letter": "B"})" "\n";

}  // namespace

TEST_CASE("custom gen: fields become trials; ids from a field", "[custom][gen]") {
  kvtest::TempDir dir;
  const auto rows = rows_of(kData, dir);
  kvgate::CustomGenOptions o = qa();
  o.id_field = "id";
  o.name = "trivia";
  o.system = "Answer in one word.";
  o.max_tokens = 32;
  const auto trials = kvgate::make_custom_trials(rows, "abc", o);
  REQUIRE(trials.size() == 3);
  CHECK(trials[0].id == "trivia/q1");
  CHECK(trials[2].id == "trivia/7");
  CHECK(trials[0].task == "trivia");
  CHECK(trials[0].input["messages"] == json::parse(R"([{"role": "system", "content": "Answer in one word."},
                                                        {"role": "user", "content": "What is 2+2?"}])"));
  CHECK(trials[0].input["max_tokens"] == 32);
  CHECK(trials[1].target == "Paris");
  CHECK(trials[0].grader == json({{"name", "exact"}}));
  CHECK(trials[0].meta["source_line"] == 1);
  CHECK(trials[0].meta["id_from"] == "field");
  CHECK(trials[0].meta["data_sha256"] == "abc");

  o.system.clear();
  o.chat = false;
  o.grader = "numeric";
  o.grader_params = {{"tolerance", 0.5}};
  const auto completions = kvgate::make_custom_trials(rows, "abc", o);
  CHECK(completions[0].input["prompt"] == "What is 2+2?");
  CHECK(completions[0].grader == json({{"name", "numeric"}, {"tolerance", 0.5}}));
}

TEST_CASE("custom gen: a template over several fields, options lettered", "[custom][gen]") {
  kvtest::TempDir dir;
  const auto rows = rows_of(kData, dir);
  kvgate::CustomGenOptions o;
  o.prompt_template = "{question}\n\n{options}\n\nReply with the letter. {{literal braces}}";
  o.target_field = "letter";
  o.grader = "choice";
  o.grader_params = {{"choices", "AB"}};
  const auto trials = kvgate::make_custom_trials(rows, "", o);
  CHECK(trials[0].input["messages"][0]["content"] == "What is 2+2?\n\nA. 3\nB. 4\n\nReply with the letter. {literal braces}");
  CHECK(trials[0].target == "B");

  for (const char* bad : {"{question", "question}", "{}", "{two words}", "no placeholder"}) {
    INFO(bad);
    REQUIRE_THROWS_WITH(kvgate::PromptTemplate(bad), contains("--template"));
  }
  o.prompt_template = "{question} {hint}";
  REQUIRE_THROWS_WITH(kvgate::make_custom_trials(rows, "", o), contains("data.jsonl:1: field \"hint\" missing (used by --template)"));
}

TEST_CASE("custom gen: field mapping errors name the line and the fields it has", "[custom][gen]") {
  kvtest::TempDir dir;
  struct Bad {
    std::string data;
    std::function<void(kvgate::CustomGenOptions&)> set;
    std::string message;
  };
  const std::string ok = R"({"question": "q", "answer": "a"})";
  const Bad bad[] = {
      {ok + "\n" + ok + "x\n", {}, "data.jsonl:2: not valid JSON"},
      {ok + "\n[1]\n", {}, "data.jsonl:2: not a JSON object"},
      {ok + "\n" + R"({"problem": "q", "answer": "a", "id": 1})", {},
       "data.jsonl:2: field \"question\" missing (--input-field); this line has: answer, id, problem"},
      {ok + "\n\n" + R"({"question": "q"})", {}, "data.jsonl:3: field \"answer\" missing (--target-field)"},
      {R"({"question": "q", "answer": null})", {}, "data.jsonl:1: field \"answer\" (--target-field) is null"},
      {R"({"question": "q", "answer": {"x": 1}})", {}, "the exact grader needs a string, a number, or an array"},
      {R"({"question": {"x": 1}, "answer": "a"})", {}, "data.jsonl:1: field \"question\" is object"},
      {R"({"question": "q", "answer": "K"})", [](kvgate::CustomGenOptions& o) { o.grader = "choice"; },
       "data.jsonl:1: field \"answer\" (--target-field) is string \"K\", not one of the option letters ABCDEFGHIJ"},
      {ok, [](kvgate::CustomGenOptions& o) { o.id_field = "id"; }, "data.jsonl:1: field \"id\" missing (--id-field)"},
      {R"({"id": 1.5, "question": "q", "answer": "a"})", [](kvgate::CustomGenOptions& o) { o.id_field = "id"; },
       "field \"id\" (--id-field) must be a non-empty string or an integer"},
      {R"({"id": "x", "question": "q", "answer": "a"})" "\n" R"({"id": "x", "question": "r", "answer": "a"})",
       [](kvgate::CustomGenOptions& o) { o.id_field = "id"; }, "data.jsonl:2: id \"custom/x\" repeats " },
      {ok + "\n" + ok, {}, "the same input twice; remove one or give --id-field"},
      {R"({"question": [{"content": "no role"}], "answer": "a"})", {}, "data.jsonl:1: field \"question\"[0] must be an object with a \"role\""},
      {ok, [](kvgate::CustomGenOptions& o) { o.grader = "telepathy"; }, "--grader telepathy: unknown grader (known: choice"},
      {ok, [](kvgate::CustomGenOptions& o) { o.grader = "regex"; }, "--grader-params: grader regex: parameter \"pattern\" is required"},
      {ok, [](kvgate::CustomGenOptions& o) { o.grader_params = {{"name", "x"}}; }, "--grader-params: must be a JSON object"},
      {ok, [](kvgate::CustomGenOptions& o) { o.name = "a/b"; }, "--name \"a/b\""},
      {ok, [](kvgate::CustomGenOptions& o) { o.input_field.clear(); }, "--input-field: name the field"},
      {ok, [](kvgate::CustomGenOptions& o) { o.chat = false, o.system = "s"; }, "--system: only chat prompts"},
      {"", {}, "no rows"},
  };
  for (const Bad& b : bad) {
    INFO(b.data);
    kvgate::CustomGenOptions o = qa();
    if (b.set) b.set(o);
    REQUIRE_THROWS_WITH(kvgate::make_custom_trials(rows_of(b.data, dir), "", o), contains(b.message));
  }
}

TEST_CASE("custom gen: hash ids are stable and depend on the input only", "[custom][gen]") {
  kvtest::TempDir dir;
  const auto a = kvgate::make_custom_trials(rows_of(kData, dir), "", qa());
  // The same questions in another order, with other answers and extra fields: the same ids.
  const auto b = kvgate::make_custom_trials(rows_of(
      R"({"question": "Largest planet?", "answer": "Saturn", "extra": 1})" "\n"
      R"({"question": "What is 2+2?", "answer": "5"})" "\n", dir), "", qa());
  CHECK(b[0].id == a[2].id);
  CHECK(b[1].id == a[0].id);
  CHECK(a[0].meta["id_from"] == "hash");
  // Pinned: ids must not change between kvgate versions (baselines are compared months apart).
  CHECK(a[0].id == "custom/f1dfd8be1e5b");
  // A system message is part of what the model is asked: another id.
  kvgate::CustomGenOptions sys = qa();
  sys.system = "Be brief.";
  CHECK(kvgate::make_custom_trials(rows_of(kData, dir), "", sys)[0].id != a[0].id);
}

TEST_CASE("custom gen: --limit takes a seeded subset and keeps ids", "[custom][gen]") {
  kvtest::TempDir dir;
  std::string data;
  for (int i = 0; i < 40; ++i) data += R"({"question": "q)" + std::to_string(i) + R"(", "answer": "a"})" "\n";
  const auto rows = rows_of(data, dir);
  const auto all = kvgate::make_custom_trials(rows, "", qa());
  kvgate::CustomGenOptions o = qa();
  o.limit = 10;
  o.seed = 5;
  const auto some = kvgate::make_custom_trials(rows, "", o);
  REQUIRE(some.size() == 10);
  CHECK(some[0].meta["subset"] == json({{"limit", 10}, {"of", 40}, {"seed", 5}}));
  std::size_t last = 0;
  bool beyond_first_ten = false;
  for (const kvgate::Trial& t : some) {
    const std::size_t index = t.meta["source_index"];
    CHECK(all[index].id == t.id);
    CHECK(index >= last);
    last = index;
    beyond_first_ten = beyond_first_ten || index >= 10;
  }
  CHECK(beyond_first_ten);
}

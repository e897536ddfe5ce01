#include <fstream>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/sha256.h"
#include "harness/core/trial.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;

static json good_trial(const std::string& id = "niah/4096/0001") {
  return json{{"id", id},
              {"task", "niah"},
              {"bucket", 4096},
              {"input", {{"messages", json::array({{{"role", "user"}, {"content", "find the needle"}}})}}},
              {"target", "4721"},
              {"grader", {{"name", "niah"}, {"ruler_substring", true}}},
              {"meta", {{"seed", 7}, {"depth", 0.5}}}};
}

TEST_CASE("trial: round-trips through JSON", "[trial]") {
  kvgate::Trial t = kvgate::trial_from_json(good_trial(), "t:1");
  CHECK(t.id == "niah/4096/0001");
  CHECK(t.bucket == 4096);
  CHECK(t.is_chat());
  CHECK(t.grader_name() == "niah");
  CHECK(kvgate::to_json(t) == good_trial());
  json completion = good_trial();
  completion["input"] = {{"prompt", "Question: 1+1?\nAnswer:"}, {"stop", {"\n\n"}}, {"max_tokens", 64}};
  kvgate::Trial c = kvgate::trial_from_json(completion, "t:2");
  CHECK_FALSE(c.is_chat());
  CHECK(kvgate::to_json(c) == completion);
}

TEST_CASE("trial: each malformed field gives an error naming place and field", "[trial]") {
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
    const char* expect;
  };
  std::vector<Case> cases = {
      {"missing id", [](json& j) { j.erase("id"); }, "t.jsonl:3: field \"id\" missing"},
      {"empty id", [](json& j) { j["id"] = ""; }, "field \"id\" must not be empty"},
      {"id not a string", [](json& j) { j["id"] = 5; }, "field \"id\" must be a string, got number 5"},
      {"bucket a string", [](json& j) { j["bucket"] = "4k"; }, "field \"bucket\" must be an integer"},
      {"bucket fractional", [](json& j) { j["bucket"] = 4096.5; }, "field \"bucket\" must be an integer"},
      {"negative bucket", [](json& j) { j["bucket"] = -1; }, "field \"bucket\" must be >= 0"},
      {"input neither", [](json& j) { j["input"] = json::object(); }, "exactly one of \"messages\""},
      {"input both", [](json& j) { j["input"]["prompt"] = "x"; }, "exactly one of \"messages\""},
      {"empty messages", [](json& j) { j["input"]["messages"] = json::array(); }, "non-empty array"},
      {"message without role", [](json& j) { j["input"]["messages"][0].erase("role"); }, "\"messages\"[0]"},
      {"stop not strings", [](json& j) { j["input"]["stop"] = {1}; }, "\"stop\" must be an array of strings"},
      {"grader without name", [](json& j) { j["grader"] = json::object(); }, "field \"grader\": field \"name\" missing"},
      {"target missing", [](json& j) { j.erase("target"); }, "field \"target\" missing"},
      {"meta not object", [](json& j) { j["meta"] = 3; }, "field \"meta\" must be an object"},
      {"not an object", [](json& j) { j = json::array(); }, "t.jsonl:3: expected a JSON object"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    json j = good_trial();
    c.mutate(j);
    REQUIRE_THROWS_WITH(kvgate::trial_from_json(j, "t.jsonl:3"), contains(c.expect));
  }
}

TEST_CASE("trial: tasks files are written atomically and read back with their sha256", "[trial]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("tasks.jsonl");
  std::vector<kvgate::Trial> trials = {kvgate::trial_from_json(good_trial("a"), "x"),
                                       kvgate::trial_from_json(good_trial("b"), "x")};
  kvgate::write_tasks(p, trials);
  kvgate::TasksFile f = kvgate::load_tasks(p);
  REQUIRE(f.trials.size() == 2);
  CHECK(f.trials[1].id == "b");
  CHECK(f.sha256 == kvgate::sha256_hex(kvtest::read_text(p)));
  CHECK(f.sha256.size() == 64);
}

TEST_CASE("trial: duplicate ids and empty files are rejected", "[trial]") {
  kvtest::TempDir dir;
  const std::string p = dir.file("dup.jsonl");
  kvtest::write_text(p, good_trial("a").dump() + "\n" + good_trial("b").dump() + "\n" + good_trial("a").dump() + "\n");
  REQUIRE_THROWS_WITH(kvgate::load_tasks(p), contains(p + ":3: id \"a\" repeats line 1"));
  kvtest::write_text(p, "\n");
  REQUIRE_THROWS_WITH(kvgate::load_tasks(p), contains("no trials"));
  std::vector<kvgate::Trial> dups = {kvgate::trial_from_json(good_trial("a"), "x"),
                                     kvgate::trial_from_json(good_trial("a"), "x")};
  const std::string out = dir.file("never.jsonl");
  REQUIRE_THROWS(kvgate::write_tasks(out, dups));
  CHECK_FALSE(std::ifstream(out).good());  // nothing half-written
}

TEST_CASE("sha256: known vectors", "[sha256]") {
  CHECK(kvgate::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(kvgate::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// Official openai/mrcr rows: the loader's errors name the row, the card's bins, rows to trials.
#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/fake_token_counters.h"
#include "datasets/mrcr/mrcr_chat.h"
#include "datasets/mrcr/mrcr_official.h"
#include "tests/test_util.h"

using nlohmann::json;
using kvtest::contains;
namespace mrcr = kvgate::mrcr;

namespace {

json messages(int assistant_words) {
  std::string reply;
  for (int i = 0; i < assistant_words; ++i) reply += "word ";
  return json::array({{{"role", "user"}, {"content", "Here are some examples:"}},
                      {{"role", "user"}, {"content", "write a poem about tapirs"}},
                      {{"role", "assistant"}, {"content", reply}},
                      {{"role", "user"}, {"content", "Prepend aYooSG8CQg to the 1st (1 indexed) poem about tapirs."}}});
}

json row(int assistant_words, int needles = 2) {
  return {{"prompt", messages(assistant_words).dump()},
          {"answer", "aYooSG8CQgword word"},
          {"random_string_to_prepend", "aYooSG8CQg"},
          {"n_needles", needles},
          {"desired_msg_index", 1},
          {"total_messages", 4},
          {"n_chars", 708925},
          {"date_added", "12/2025"}};
}

std::string load_error(const std::string& line) {
  kvtest::TempDir dir;
  const std::string path = dir.file("mrcr.jsonl");
  kvtest::write_text(path, row(3).dump() + "\n" + line + "\n");
  try {
    mrcr::for_each_official_row(path, [](mrcr::OfficialRow&&) { return true; });
  } catch (const kvgate::Error& e) {
    return std::string(e.what()).substr(dir.path().size() + 1);  // "mrcr.jsonl:2: ..."
  }
  return "no error";
}

}  // namespace

TEST_CASE("mrcr official: a good row parses", "[mrcr]") {
  const mrcr::OfficialRow r = mrcr::parse_official_row(row(3), "x", 7);
  CHECK(r.index == 7);
  CHECK(r.messages.size() == 4);
  CHECK(r.prefix == "aYooSG8CQg");
  CHECK(r.n_needles == 2);
  CHECK(r.desired_msg_index == 1);
  CHECK(r.n_chars == 708925);
  CHECK(r.date_added == "12/2025");
}

TEST_CASE("mrcr official: malformed rows are errors naming the file, line and field", "[mrcr]") {
  json j = row(3);
  j["prompt"] = "[{\"role\": \"user\", \"content\": \"hi\"";  // cut short
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"prompt\" is not valid JSON"));
  j = row(3);
  j.erase("answer");
  CHECK(load_error(j.dump()) == "mrcr.jsonl:2: field \"answer\" missing");
  j = row(3);
  j.erase("random_string_to_prepend");
  CHECK(load_error(j.dump()) == "mrcr.jsonl:2: field \"random_string_to_prepend\" missing");
  j = row(3);
  j["n_needles"] = "two";
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"n_needles\" must be an integer"));
  j = row(3);
  j["prompt"] = json::array();  // a list instead of the JSON string of one
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"prompt\" must be a string"));
  j = row(3);
  j["prompt"] = "{\"role\": \"user\"}";
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"prompt\" must hold a non-empty JSON list"));
  j = row(3);
  j["prompt"] = "[{\"role\": \"user\"}]";
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"prompt\" message 0 has no string \"content\""));
  j = row(3);
  j["desired_msg_index"] = 9;
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"desired_msg_index\" is 9, outside the 4 messages"));
  j = row(3);
  j["random_string_to_prepend"] = "";
  CHECK_THAT(load_error(j.dump()), contains("mrcr.jsonl:2: field \"random_string_to_prepend\" is empty"));
  CHECK_THAT(load_error("{\"prompt\": "), contains("mrcr.jsonl:2: not valid JSON"));
  CHECK_THAT(load_error("[1, 2]"), contains("mrcr.jsonl:2: expected a JSON object"));
}

TEST_CASE("mrcr official: an empty or missing file is an error", "[mrcr]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("empty.jsonl"), "\n");
  auto none = [](mrcr::OfficialRow&&) { return true; };
  REQUIRE_THROWS_WITH(mrcr::for_each_official_row(dir.file("empty.jsonl"), none), contains("no rows"));
  REQUIRE_THROWS_WITH(mrcr::for_each_official_row(dir.file("missing.jsonl"), none), contains("cannot open"));
}

TEST_CASE("mrcr official: the card's bins, first closed, the rest left-open", "[mrcr]") {
  CHECK_FALSE(mrcr::bin_upper_edge(4095));
  CHECK(mrcr::bin_upper_edge(4096) == 8192);
  CHECK(mrcr::bin_upper_edge(8192) == 8192);
  CHECK(mrcr::bin_upper_edge(8193) == 16384);
  CHECK(mrcr::bin_upper_edge(131072) == 131072);
  CHECK(mrcr::bin_upper_edge(131073) == 262144);
  CHECK(mrcr::bin_upper_edge(1048576) == 1048576);
  CHECK_FALSE(mrcr::bin_upper_edge(1048577));
  // Tokens of every message's content plus the answer: no roles, no template.
  kvtest::PreTokenCounter tc;
  const json m = json::array({{{"role", "user"}, {"content", "a b"}}, {{"role", "assistant"}, {"content", "c"}}});
  CHECK(mrcr::bin_tokens(tc, m, "d e f") == 2 + 1 + 3);
}

TEST_CASE("mrcr official: rows become trials in their bins, filtered and capped", "[mrcr]") {
  kvtest::PreTokenCounter tc;
  mrcr::OfficialTrialBuilder b({.buckets = {8192, 16384},
                                .per_bucket = 2,
                                .needles = {2, 4},
                                .merge_user_turns = true,
                                .counter = &tc,
                                .origin = "test.jsonl"});
  // ~5000 tokens -> 8192; ~10000 -> 16384; 100 -> outside the bins; 8 needles -> filtered.
  CHECK(b.add(mrcr::parse_official_row(row(5000), "r0", 0)));
  CHECK(b.add(mrcr::parse_official_row(row(100), "r1", 1)));
  CHECK(b.add(mrcr::parse_official_row(row(10000, 8), "r2", 2)));
  CHECK(b.add(mrcr::parse_official_row(row(10000, 4), "r3", 3)));
  CHECK(b.add(mrcr::parse_official_row(row(6000), "r4", 4)));
  CHECK(b.add(mrcr::parse_official_row(row(7000), "r5", 5)));  // 8192 is full: skipped
  CHECK(b.add(mrcr::parse_official_row(row(40000), "r6", 6)));  // 65536 not requested
  CHECK_FALSE(b.add(mrcr::parse_official_row(row(12000, 2), "r7", 7)));  // both bins full: stop
  const auto& s = b.summary();
  CHECK(s.rows == 8);
  CHECK(s.out_of_bins == 1);
  CHECK(s.not_selected == 3);
  const std::vector<kvgate::Trial> trials = b.take_trials();
  REQUIRE(trials.size() == 4);
  CHECK(trials[0].id == "mrcr/8192/0000");
  CHECK(trials[0].bucket == 8192);
  CHECK(trials[1].id == "mrcr/16384/0003");
  CHECK(trials[1].bucket == 16384);
  CHECK(trials[2].id == "mrcr/8192/0004");
  CHECK(trials[3].id == "mrcr/16384/0007");
  const kvgate::Trial& t = trials[0];
  CHECK(t.task == "mrcr");
  CHECK(t.target == "aYooSG8CQgword word");
  CHECK(t.grader == json{{"name", "mrcr"}, {"prefix", "aYooSG8CQg"}});
  CHECK(t.meta["bin_tokens"] == mrcr::bin_tokens(tc, messages(5000), "aYooSG8CQgword word"));
  CHECK(t.meta["prompt_tokens"] == tc.count_chat(t.input["messages"]));
  CHECK(t.meta["source"] == "openai/mrcr");
  CHECK(t.meta["n_needles"] == 2);
  // Merged: the two opening user turns are one.
  const json& m = t.input["messages"];
  REQUIRE(m.size() == 3);
  CHECK(m[0]["content"] == "Here are some examples:\nwrite a poem about tapirs");
  CHECK(t.meta["desired_msg_index"] == 1);       // the row's
  CHECK(t.meta["desired_msg_index_sent"] == 0);  // the ask, now in the merged first message
}

TEST_CASE("mrcr official: --lengths must name bin upper edges", "[mrcr]") {
  kvtest::PreTokenCounter tc;
  REQUIRE_THROWS_WITH(mrcr::OfficialTrialBuilder({.buckets = {4096}, .counter = &tc}),
                      contains("4096 is not the upper edge of an official MRCR bin"));
}

TEST_CASE("mrcr chat: merging consecutive user turns", "[mrcr]") {
  const json m = json::array({{{"role", "system"}, {"content", "s"}},
                              {{"role", "user"}, {"content", "a"}},
                              {{"role", "user"}, {"content", "b"}},
                              {{"role", "user"}, {"content", "c"}},
                              {{"role", "assistant"}, {"content", "d"}},
                              {{"role", "user"}, {"content", "e"}}});
  const json merged = mrcr::merge_consecutive_user_turns(m);
  REQUIRE(merged.size() == 4);
  CHECK(merged[1]["content"] == "a\nb\nc");
  CHECK(merged[3]["content"] == "e");
  CHECK(mrcr::merge_consecutive_user_turns(m, "\n\n")[1]["content"] == "a\n\nb\n\nc");
  const json parts = json::array({{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", json::array()}}});
  REQUIRE_THROWS_AS(mrcr::merge_consecutive_user_turns(parts), kvgate::Error);
  CHECK(mrcr::content_chars(json::array({{{"role", "user"}, {"content", "a\xC3\xA9"}}})) == 2);
  // Indices move as merged messages join: s, a+b+c, d, e.
  CHECK(mrcr::merged_message_index(m, 0) == 0);
  CHECK(mrcr::merged_message_index(m, 1) == 1);
  CHECK(mrcr::merged_message_index(m, 3) == 1);
  CHECK(mrcr::merged_message_index(m, 4) == 2);
  CHECK(mrcr::merged_message_index(m, 5) == 3);
}

// Generated MRCR trials: exact lengths with several counters, the MRCR shape, determinism.
#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/fake_token_counters.h"
#include "datasets/mrcr/mrcr_conversation.h"
#include "datasets/mrcr/mrcr_fit.h"
#include "datasets/mrcr/mrcr_gen.h"
#include "datasets/mrcr/mrcr_text.h"

using nlohmann::json;
using kvtest::contains;
namespace mrcr = kvgate::mrcr;

namespace {

mrcr::GenOptions options(const kvgate::TokenCounter& tc, std::vector<std::int64_t> lengths, int per_bucket = 3) {
  return {.seed = 11, .lengths = std::move(lengths), .per_bucket = per_bucket, .needles = {2, 4, 8}, .counter = &tc};
}

// The MRCR shape: n identical asks, the final ask names the k-th, the target is its reply.
void check_shape(const kvgate::Trial& t, bool merged) {
  INFO(t.id);
  const json& m = t.input["messages"];
  const int n = t.meta["n_needles"], k = t.meta["desired_index"];
  const std::string format = t.meta["format"], topic = t.meta["topic"];
  const std::string ask = mrcr::ask_text(format, topic);
  const std::string prefix = t.grader["prefix"];
  CHECK(prefix.size() == 10);
  CHECK(std::all_of(prefix.begin(), prefix.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }));
  CHECK(m.back()["role"] == "user");
  CHECK(m.back()["content"] == "Prepend " + prefix + " to the " + mrcr::ordinal(k) + " (1 indexed) " + format + " about " +
                                   topic + ". Do not include any other text in your response.");
  std::vector<std::string> replies;
  for (std::size_t i = 0; i + 1 < m.size(); ++i) {
    const std::string c = m[i]["content"];
    const bool is_ask = m[i]["role"] == "user" && (c == ask || (c.size() > ask.size() && c.ends_with("\n" + ask)));
    if (is_ask) replies.push_back(m[i + 1]["content"]);
  }
  REQUIRE(static_cast<int>(replies.size()) == n);
  CHECK(t.target == prefix + replies[static_cast<std::size_t>(k - 1)]);
  CHECK(std::set<std::string>(replies.begin(), replies.end()).size() == replies.size());  // all different
  const std::int64_t idx = t.meta["desired_msg_index"];
  const std::string at = m[static_cast<std::size_t>(idx)]["content"];
  CHECK(at.ends_with(ask));
  CHECK(m[0]["content"].get<std::string>().starts_with("Here are some examples of conversations"));
  bool consecutive_users = false;
  for (std::size_t i = 1; i < m.size(); ++i) consecutive_users |= m[i]["role"] == "user" && m[i - 1]["role"] == "user";
  CHECK(consecutive_users == !merged);  // the official shape opens with two user turns
  CHECK(t.meta["total_messages"] == m.size());
}

}  // namespace

TEST_CASE("mrcr gen: exact lengths with an additive exact counter", "[mrcr]") {
  kvtest::PreTokenCounter tc;
  for (std::int64_t target : {4096, 5000, 8192, 12345, 32768, 65536}) {
    for (int needles : {2, 4, 8}) {
      mrcr::GenOptions o = options(tc, {target}, 1);
      o.needles = {needles};
      const kvgate::Trial t = mrcr::generate_trial(o, target, needles);
      INFO(t.id << " needles " << needles);
      CHECK(tc.count_chat(t.input["messages"]) == static_cast<std::size_t>(target));
      CHECK(t.meta["prompt_tokens"] == target);
      CHECK(t.meta["answer_tokens"] == tc.count_text(t.target.get<std::string>()));
      CHECK(t.meta["exact_length"] == true);
      CHECK(t.meta["n_needles"] == needles);
      check_shape(t, false);
    }
  }
}

TEST_CASE("mrcr gen: exact lengths when cuts jump and when counts do not add up", "[mrcr]") {
  kvtest::LongWordCounter jumpy;
  kvtest::ChunkCounter chunky;
  const auto estimate = kvgate::make_estimating_token_counter();
  const kvgate::TokenCounter* counters[] = {&jumpy, &chunky, estimate.get()};
  for (const kvgate::TokenCounter* tc : counters) {
    for (std::int64_t target : {4096, 7777, 16384, 40000}) {
      for (int i = 0; i < 3; ++i) {
        const kvgate::Trial t = mrcr::generate_trial(options(*tc, {target}), target, i);
        INFO(tc->source() << " " << t.id);
        CHECK(tc->count_chat(t.input["messages"]) == static_cast<std::size_t>(target));
        CHECK(t.meta["exact_length"] == true);
        CHECK(t.meta["token_count_source"] == tc->source());
      }
    }
  }
}

TEST_CASE("mrcr fit: counts that add up over messages take three whole counts; others still land", "[mrcr]") {
  // Base, one turn (the per-turn overhead), and the verification of the predicted fit: with an
  // additive counter (as ChatML templates are) the per-message counts choose turns and cut.
  kvtest::PreTokenCounter additive;
  kvtest::ChunkCounter chunky;
  for (int needles : {2, 4, 8}) {
    for (bool merge : {false, true}) {
      for (std::int64_t target : {4096, 5000, 12345, 65536}) {
        INFO("needles " << needles << " merge " << merge << " target " << target);
        mrcr::Conversation a({.seed = 5, .needles = needles, .target_tokens = target});
        const mrcr::FitResult fa = mrcr::fit_to_length(a, additive, {.target_tokens = target, .merge_user_turns = merge});
        CHECK(fa.exact);
        CHECK(fa.full_counts == 3);
        CHECK(static_cast<std::int64_t>(additive.count_chat(a.messages(merge))) == target);
        mrcr::Conversation c({.seed = 5, .needles = needles, .target_tokens = target});
        const mrcr::FitResult fc = mrcr::fit_to_length(c, chunky, {.target_tokens = target, .merge_user_turns = merge});
        CHECK(fc.exact);
        CHECK(static_cast<std::int64_t>(chunky.count_chat(c.messages(merge))) == target);
      }
    }
  }
}

TEST_CASE("mrcr gen: merged user turns are counted as sent", "[mrcr]") {
  kvtest::PreTokenCounter tc;
  mrcr::GenOptions o = options(tc, {8192, 16384}, 4);
  o.merge_user_turns = true;
  for (const kvgate::Trial& t : mrcr::generate_trials(o)) {
    CHECK(tc.count_chat(t.input["messages"]) == static_cast<std::size_t>(t.bucket));
    CHECK(t.meta["merged_user_turns"] == true);
    check_shape(t, true);
  }
}

TEST_CASE("mrcr gen: deterministic from the seed, ids stable, needles cycle", "[mrcr]") {
  kvtest::PreTokenCounter tc;
  const auto a = mrcr::generate_trials(options(tc, {4096, 8192}, 4));
  const auto b = mrcr::generate_trials(options(tc, {4096, 8192}, 4));
  REQUIRE(a.size() == 8);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(to_json(a[i]).dump() == to_json(b[i]).dump());
  CHECK(a[0].id == "mrcr/4096/0000");
  CHECK(a[7].id == "mrcr/8192/0003");
  CHECK(a[0].meta["n_needles"] == 2);
  CHECK(a[1].meta["n_needles"] == 4);
  CHECK(a[2].meta["n_needles"] == 8);
  CHECK(a[3].meta["n_needles"] == 2);
  // A trial does not depend on the other buckets or on how many trials are asked for.
  const auto c = mrcr::generate_trials(options(tc, {8192}, 2));
  CHECK(to_json(c[1]).dump() == to_json(a[5]).dump());
  // Threads fill their own slots: the same trials whatever the thread count.
  mrcr::GenOptions threaded = options(tc, {4096, 8192}, 4);
  threaded.threads = 3;
  const auto d = mrcr::generate_trials(threaded);
  REQUIRE(d.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(to_json(d[i]).dump() == to_json(a[i]).dump());
  mrcr::GenOptions other = options(tc, {4096}, 1);
  other.seed = 12;
  CHECK(to_json(mrcr::generate_trials(other)[0]).dump() != to_json(a[0]).dump());
}

TEST_CASE("mrcr gen: a bucket too small for the needles is an error naming the fix", "[mrcr]") {
  kvtest::PreTokenCounter tc;
  mrcr::GenOptions o = options(tc, {600}, 1);
  o.needles = {8};
  REQUIRE_THROWS_WITH(mrcr::generate_trials(o), contains("600-token bucket cannot hold 8 needles") && contains("--lengths"));
  o.needles = {0};
  REQUIRE_THROWS_AS(mrcr::generate_trials(o), kvgate::Error);
  o = options(tc, {8192, 8192}, 1);  // the ids would clash
  REQUIRE_THROWS_WITH(mrcr::generate_trials(o), contains("--lengths: 8192 is given twice"));
}

TEST_CASE("mrcr conversation: adding turns keeps the needles and the other turns", "[mrcr]") {
  mrcr::Conversation c({.seed = 3, .needles = 4, .target_tokens = 32768});
  c.set_filler_count(10);
  const std::string t3 = c.filler(3).reply;
  const std::string answer = c.answer();
  c.set_filler_count(40);
  CHECK(c.filler(3).reply == t3);
  CHECK(c.answer() == answer);
  c.cut_reply(39, 5);
  const json m = c.messages(false);
  CHECK(c.cut_replies() == 1);
  bool found = false;
  for (const json& x : m) found |= x["content"] == c.filler(39).reply.substr(0, 5);
  CHECK(found);
}

TEST_CASE("mrcr text: replies differ per stream and fit their length", "[mrcr]") {
  CHECK(mrcr::ask_text("poem", "tapirs") == "write a poem about tapirs");
  CHECK(mrcr::ask_text("essay", "owls") == "write an essay about owls");
  CHECK(mrcr::ordinal(1) == "1st");
  CHECK(mrcr::ordinal(2) == "2nd");
  CHECK(mrcr::ordinal(3) == "3rd");
  CHECK(mrcr::ordinal(4) == "4th");
  CHECK(mrcr::ordinal(11) == "11th");
  CHECK(mrcr::ordinal(12) == "12th");
  CHECK(mrcr::ordinal(13) == "13th");
  CHECK(mrcr::ordinal(22) == "22nd");
  for (std::size_t f = 0; f < mrcr::formats().size(); ++f) {
    kvgate::Rng r1(1), r2(2);
    const std::string a = mrcr::write_reply(f, "tapirs", 200, r1), b = mrcr::write_reply(f, "tapirs", 200, r2);
    INFO(mrcr::formats()[f]);
    CHECK(a != b);
    std::size_t words = 0;
    bool in = false;
    for (char ch : a) {
      const bool sp = std::isspace(static_cast<unsigned char>(ch));
      words += !sp && !in;
      in = !sp;
    }
    CHECK(words >= 200);
    CHECK(words < 400);
  }
}

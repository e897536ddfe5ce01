// datasets/haystack/haystack_fine_step: the finer last step of length fitting, on its own and
// through niah and multicode with the demo model's small tokenizer (4,096 ids), whose counts jump
// several tokens with one byte of budget at short lengths.
#include <string>
#include <vector>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/trial.h"
#include "tests/fake_token_counter.h"
#include "datasets/haystack/haystack_fine_step.h"
#include "datasets/haystack/haystack_input.h"
#include "datasets/haystack/prose_generator.h"
#include "datasets/multicode/multicode.h"
#include "datasets/niah/niah.h"
#include "tests/test_util.h"

using kvgate::Trial;
using kvgate::haystack::HaystackBuilder;
using kvgate::haystack::HaystackSelection;
using kvgate::haystack::ProseGenerator;
using kvtest::contains;

namespace {

// Counts only sentence ends, 40 tokens each: every count is a multiple of 40, so a window that
// holds none cannot be reached by any haystack.
class FortyPerSentence final : public kvgate::TokenCounter {
 public:
  std::size_t count_text(std::string_view s) const override {
    std::size_t n = 0;
    for (char c : s) n += (c == '.' || c == '?' || c == '!') ? 40 : 0;
    return n;
  }
  std::size_t count_chat(const nlohmann::json& messages) const override {
    return count_text(kvgate::render_chatml(messages, true));
  }
  bool exact() const override { return true; }
  std::string source() const override { return "test:forty-per-sentence"; }
};

const kvgate::TokenCounter& demo_tokenizer() {
  static const auto counter = kvgate::make_hf_token_counter("models/demo/tokenizer.json");
  return *counter;
}

std::string dump_all(const std::vector<Trial>& trials) {
  std::string out;
  for (const Trial& t : trials) out += kvgate::to_json(t).dump() + "\n";
  return out;
}

// Every trial within [target - floor(0.5% of target), target - reserve], recounted by the tokenizer.
void check_window(const std::vector<Trial>& trials, const kvgate::TokenCounter& counter) {
  for (const Trial& t : trials) {
    INFO(t.id);
    const std::int64_t tokens = t.meta.at("prompt_tokens").get<std::int64_t>();
    CHECK(tokens <= t.bucket - t.meta.value("reserved_special_tokens", 0));
    CHECK(tokens >= t.bucket - t.bucket * 5 / 1000);
    CHECK(tokens == static_cast<std::int64_t>(kvgate::count_input(counter, t.input)));
    CHECK(t.meta.at("length_exact") == true);
  }
}

}  // namespace

TEST_CASE("fine step: varies the ending to land in a window the byte search cannot, never above it", "[haystack][fine_step]") {
  kvtest::WordTokenCounter counter;
  ProseGenerator g(31);
  HaystackBuilder b(g);
  auto count = [&](const HaystackSelection& sel) {
    std::string out = "Instructions.\n";
    b.render(sel, {}, out);
    return static_cast<std::int64_t>(counter.count_text(out));
  };
  const HaystackSelection start = b.select(3000);
  const std::int64_t start_tokens = count(start);
  for (std::int64_t gap : {1, 2, 5, 9, 17}) {
    INFO(gap);
    int counted = 0;
    auto counting = [&](const HaystackSelection& sel) { return ++counted, count(sel); };
    const kvgate::haystack::FineStepOptions o{.lowest = start_tokens + gap, .highest = start_tokens + gap};  // one count only
    const auto r = kvgate::haystack::fine_step(b, start, start_tokens, counter, o, counting);
    REQUIRE(r.found);
    CHECK(r.tokens == start_tokens + gap);
    CHECK(count(r.selection) == r.tokens);  // the selection is the one counted
    CHECK(r.counts == counted);
    CHECK(r.counts <= o.max_counts);
    CHECK(r.selection.sentences + 3 >= start.sentences);
    CHECK(r.selection.sentences <= start.sentences);
    CHECK(r.selection.fillers.size() <= 3);
    std::string out;
    b.render(r.selection, {}, out);
    CHECK(static_cast<std::int64_t>(out.size()) == r.selection.bytes);
    // Deterministic: the same choice again.
    const auto again = kvgate::haystack::fine_step(b, start, start_tokens, counter, o, count);
    CHECK(again.selection.sentences == r.selection.sentences);
    CHECK(again.selection.fillers == r.selection.fillers);
  }
  // Out of reach of three sentences' worth: nothing predicted, nothing counted.
  const auto far = kvgate::haystack::fine_step(b, start, start_tokens, counter,
                                               {.lowest = start_tokens + 5000, .highest = start_tokens + 5010}, count);
  CHECK_FALSE(far.found);
  CHECK(far.choices == 0);
  CHECK(far.counts == 0);
}

TEST_CASE("fine step: demo tokenizer, multicode and niah at 512, 600, 640 and 768 tokens all fit, deterministically",
          "[haystack][fine_step][demo]") {
  // Before the fine step, seeds 2 to 5 of multicode at 512 (and niah at 512 with seeds 1, 2, 4,
  // multicode at 640 seed 4, at 768 seed 3, ...) failed with "the count jumps from 509 to 514".
  // (Each generation measures the prose's density on a megabyte first: keep their number small.)
  const auto& counter = demo_tokenizer();
  struct Case {
    std::uint64_t seed;
    kvgate::InputApi api;
    bool twice;  // generate again with one thread: the same bytes
  };
  const auto chat = kvgate::InputApi::chat, completions = kvgate::InputApi::completions;
  for (const Case& c : {Case{1, chat, false}, Case{2, chat, true}, Case{3, chat, false}, Case{4, chat, true},
                        Case{5, chat, false}, Case{1, completions, true}, Case{2, completions, false}}) {
    const std::uint64_t seed = c.seed;
    const auto api = c.api;
    INFO("seed " << seed << (api == chat ? " chat" : " completions"));
    const kvgate::multicode::MulticodeOptions mo{
        .seed = seed, .lengths = {512, 600, 640, 768}, .per_bucket = 20, .lines = 8, .ask = 4, .api = api, .threads = 2};
    std::vector<Trial> multicode;
    REQUIRE_NOTHROW(multicode = kvgate::multicode::generate_multicode(mo, counter));
    CHECK(multicode.size() == 80);
    check_window(multicode, counter);
    for (const Trial& t : multicode) {  // every code line where meta says
      INFO(t.id);
      const std::string& text = kvgate::haystack::input_text(t.input);
      for (const auto& line : t.meta.at("lines")) {
        const std::string sentence = line.at("text").get<std::string>();
        CHECK(text.compare(line.at("offset").get<std::size_t>(), sentence.size(), sentence) == 0);
      }
    }
    if (c.twice) {
      auto one_thread = mo;
      one_thread.threads = 1;
      CHECK(dump_all(kvgate::multicode::generate_multicode(one_thread, counter)) == dump_all(multicode));
    }

    const kvgate::niah::NiahOptions no{
        .seed = seed, .lengths = {512, 600, 640, 768}, .per_bucket = 20, .depths = {}, .api = api, .threads = 2};
    std::vector<Trial> niah;
    REQUIRE_NOTHROW(niah = kvgate::niah::generate_niah(no, counter));
    CHECK(niah.size() == 80);
    check_window(niah, counter);
    for (const Trial& t : niah) {  // the needle is where meta says, whatever ending the haystack got
      INFO(t.id);
      const std::string& text = kvgate::haystack::input_text(t.input);
      const std::string needle = t.meta.at("needle").get<std::string>();
      CHECK(text.compare(t.meta.at("needle_offset").get<std::size_t>(), needle.size(), needle) == 0);
    }
    if (c.twice) {
      auto one_thread = no;
      one_thread.threads = 1;
      CHECK(dump_all(kvgate::niah::generate_niah(one_thread, counter)) == dump_all(niah));
    }
  }
}

TEST_CASE("fine step: a length no haystack can reach still fails, with both steps in the reason", "[haystack][fine_step]") {
  // Multiples of 40 only: [1005, 1010] holds none.
  FortyPerSentence counter;
  const kvgate::niah::NiahOptions o{.seed = 3, .lengths = {1010}, .per_bucket = 1, .depths = {50}, .threads = 1};
  try {
    kvgate::niah::generate_niah(o, counter);
    FAIL("expected an error");
  } catch (const kvgate::Error& e) {
    const std::string m = e.what();
    CHECK_THAT(m, contains("niah/1010/0000: cannot fit the input to 1010 tokens"));
    CHECK_THAT(m, contains("past the window [1005, 1010]"));
    CHECK_THAT(m, contains("nor does any other ending of the haystack"));
    CHECK_THAT(m, contains("0 predicted in the window, 0 counted"));
    CHECK(e.exit_code() == 2);
  }
}

TEST_CASE("fine step: the demo tokenizer through the command line, at 512 tokens", "[haystack][fine_step][demo]") {
  kvtest::TempDir dir;
  const std::string out = dir.path() + "/multicode.jsonl";
  // Failed before with "the count jumps from 509 to 514 tokens with one more byte of filler".
  const auto r = kvtest::run_kvgate({"gen", "multicode", "--out", out, "--lengths", "512", "--lines", "8", "--ask", "4",
                                     "--per-bucket", "20", "--seed", "2", "--tokenizer", "models/demo/tokenizer.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<Trial> trials;
  for (const nlohmann::json& j : kvgate::read_jsonl(out)) trials.push_back(kvgate::trial_from_json(j, out));
  REQUIRE(trials.size() == 20);
  check_window(trials, demo_tokenizer());
}

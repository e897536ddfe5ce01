// datasets/niah: generation (lengths, needles where meta says, depths, determinism) and the grader.
#include <regex>

#include "tests/catch_compat.hpp"
#include "datasets/common/depths.h"
#include "harness/core/error.h"
#include "tests/fake_token_counter.h"
#include "datasets/graders.h"
#include "datasets/haystack/corpus.h"
#include "datasets/haystack/haystack_input.h"
#include "datasets/niah/niah.h"
#include "tests/test_util.h"

using kvgate::Trial;
using kvgate::niah::NiahOptions;
using kvtest::contains;

namespace {

const std::string& text_of(const Trial& t) { return kvgate::haystack::input_text(t.input); }

// Every trial within [target - floor(0.5%), target - reserve], and the meta count is the counter's.
void check_lengths(const std::vector<Trial>& trials, const kvgate::TokenCounter& counter) {
  for (const Trial& t : trials) {
    INFO(t.id);
    const std::int64_t tokens = t.meta.at("prompt_tokens").get<std::int64_t>();
    const std::int64_t reserve = t.meta.value("reserved_special_tokens", 0);
    CHECK(tokens <= t.bucket - reserve);
    CHECK(tokens >= t.bucket - t.bucket / 200);
    CHECK(tokens == static_cast<std::int64_t>(kvgate::count_input(counter, t.input)));
    CHECK(t.meta.at("target_tokens") == t.bucket);
  }
}

kvgate::Grade grade(const Trial& t, const std::string& response) {
  return kvgate::grade_trial({.trial = t, .response = response});
}

}  // namespace

TEST_CASE("niah: trials hit their lengths, ids are stable, the needle is where meta says", "[niah]") {
  auto counter = kvgate::make_estimating_token_counter();
  NiahOptions o{.seed = 7, .lengths = {1024, 4096, 16384}, .per_bucket = 6, .depths = {0, 50, 100}};
  const auto trials = kvgate::niah::generate_niah(o, *counter);
  REQUIRE(trials.size() == 18);
  CHECK(trials[0].id == "niah/1024/0000");
  CHECK(trials[17].id == "niah/16384/0005");
  check_lengths(trials, *counter);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    INFO(t.id);
    const auto& m = t.meta;
    const std::string& text = text_of(t);
    const std::string needle = m.at("needle");
    CHECK(text.compare(m.at("needle_offset").get<std::size_t>(), needle.size(), needle) == 0);
    CHECK(text.find(needle) == text.rfind(needle));  // exactly once
    CHECK(needle == "One of the special magic numbers for " + m.at("key").get<std::string>() + " is: " + t.target.get<std::string>() + ".");
    CHECK(std::regex_match(t.target.get<std::string>(), std::regex("[1-9][0-9]{6}")));
    CHECK(m.at("depth") == o.depths[i % 6 % 3]);
    CHECK(std::abs(m.at("depth_actual").get<double>() - m.at("depth").get<double>()) < 3.0);
    CHECK(m.at("length_exact") == false);
    CHECK_THAT(m.at("length_note").get<std::string>(), contains("estimated"));
    CHECK(t.grader.at("name") == "niah");
    CHECK(t.input.at("max_tokens") == 128);
    // RULER's singular template, the question after the context.
    CHECK(text.rfind("A special magic number is hidden within the following text. Make sure to memorize it. I will quiz you about the number afterwards.\n", 0) == 0);
    const std::string question = "\nWhat is the special magic number for " + m.at("key").get<std::string>() + " mentioned in the provided text?";
    CHECK(text.size() >= question.size());
    CHECK(text.compare(text.size() - question.size(), question.size(), question) == 0);
  }
}

TEST_CASE("niah: the same seed gives identical trials whatever the threads; another seed differs", "[niah]") {
  kvtest::WordTokenCounter counter;
  NiahOptions o{.seed = 3, .lengths = {2048, 8192}, .per_bucket = 4, .threads = 1};
  const auto a = kvgate::niah::generate_niah(o, counter);
  o.threads = 3;
  const auto b = kvgate::niah::generate_niah(o, counter);
  o.seed = 4;
  const auto c = kvgate::niah::generate_niah(o, counter);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(kvgate::to_json(a[i]).dump() == kvgate::to_json(b[i]).dump());
    CHECK(text_of(a[i]) != text_of(c[i]));
  }
}

TEST_CASE("niah: an exact counter that is not proportional to bytes is met in a few counts", "[niah]") {
  kvtest::WordTokenCounter counter;
  NiahOptions o{.seed = 5, .lengths = {1000, 4096, 32768}, .per_bucket = 5, .depths = {}};  // random depths
  const auto trials = kvgate::niah::generate_niah(o, counter);
  check_lengths(trials, counter);
  std::size_t counts = 0;
  for (const Trial& t : trials) {
    counts += t.meta.at("fit_counts").get<std::size_t>();
    CHECK(t.meta.at("length_exact") == true);
    CHECK(t.meta.at("token_counter") == "test:words");
    CHECK_FALSE(t.meta.contains("length_note"));
    const double d = t.meta.at("depth").get<double>();
    CHECK((d >= 0 && d <= 100));
  }
  // Each trial: one count of the fixed part and about two full ones.
  CHECK(static_cast<double>(counts) / trials.size() <= 4.5);
}

TEST_CASE("niah: with the Qwen3 tokenizer every trial is within 0.5% and never above, chat template included", "[niah][qwen3]") {
  const auto qwen3 = kvgate::make_hf_token_counter(kvtest::data_dir() + "/tokenizers/qwen3/tokenizer.json");
  for (auto api : {kvgate::InputApi::chat, kvgate::InputApi::completions}) {
    NiahOptions o{.seed = 21, .lengths = {1024, 4096, 32768}, .per_bucket = 4, .depths = {0, 33, 67, 100}, .api = api};
    const auto trials = kvgate::niah::generate_niah(o, *qwen3);
    check_lengths(trials, *qwen3);  // each count recounted by the tokenizer (golden-tested against HF by tokenizer-test)
    for (const Trial& t : trials) {
      INFO(t.id);
      CHECK(t.meta.at("length_exact") == true);
      CHECK_THAT(t.meta.at("token_counter").get<std::string>(), contains("qwen3/tokenizer.json"));
      CHECK(t.meta.at("fit_counts").get<int>() <= 5);
      if (api == kvgate::InputApi::chat)  // Qwen3's template adds its own tokens around the content
        CHECK(t.meta.at("prompt_tokens").get<std::size_t>() > qwen3->count_text(text_of(t)));
    }
  }
}

TEST_CASE("niah: completions end in RULER's answer prefix and keep a token free", "[niah]") {
  kvtest::WordTokenCounter counter;
  NiahOptions o{.seed = 9, .lengths = {4096}, .per_bucket = 3, .api = kvgate::InputApi::completions,
                .value_type = kvgate::niah::ValueType::uuids};
  const auto trials = kvgate::niah::generate_niah(o, counter);
  check_lengths(trials, counter);
  for (const Trial& t : trials) {
    REQUIRE(t.input.contains("prompt"));
    CHECK(t.meta.at("reserved_special_tokens") == 1);
    CHECK(std::regex_match(t.target.get<std::string>(),
                           std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
    const std::string key = t.meta.at("key");
    const std::string tail = "mentioned in the provided text? The special magic uuid for " + key + " mentioned in the provided text is";
    const std::string& p = text_of(t);
    CHECK(p.compare(p.size() - tail.size(), tail.size(), tail) == 0);
    CHECK_THAT(p, contains("One of the special magic uuids for " + key + " is: "));
  }
}

TEST_CASE("niah: a corpus haystack is recorded by name and hash, and still fits", "[niah]") {
  kvtest::TempDir dir;
  std::string text;
  for (int i = 0; i < 400; ++i) text += "Paragraph " + std::to_string(i) + " begins here. It has a second sentence, longer than the first one.\n\n";
  kvtest::write_text(dir.file("docs.txt"), text);
  const auto corpus = kvgate::haystack::load_corpus({dir.file("docs.txt")});
  kvtest::WordTokenCounter counter;
  NiahOptions o{.seed = 2, .lengths = {2048, 16384}, .per_bucket = 2, .corpus = &corpus};
  const auto trials = kvgate::niah::generate_niah(o, counter);
  check_lengths(trials, counter);
  for (const Trial& t : trials) {
    const auto& h = t.meta.at("haystack");
    CHECK(h.at("source") == "file");
    CHECK(h.at("files") == nlohmann::json::array({"docs.txt"}));
    CHECK(h.at("sha256") == corpus.sha256);
    CHECK_THAT(text_of(t), contains("begins here."));
  }
  CHECK(trials[2].meta.at("haystack").at("wraps").get<int>() >= 1);  // 16K tokens > the corpus: it repeats
}

TEST_CASE("niah: bad options are clear errors", "[niah]") {
  auto counter = kvgate::make_estimating_token_counter();
  REQUIRE_THROWS_WITH(kvgate::niah::generate_niah({.lengths = {4096, 64}, .per_bucket = 1}, *counter),
                      contains("niah/64/0000: cannot fit the input to 64 tokens") && contains("use a larger length"));
  REQUIRE_THROWS_WITH(kvgate::niah::generate_niah({.lengths = {4096, 4096}}, *counter), contains("4096 is given twice"));
  REQUIRE_THROWS_WITH(kvgate::niah::generate_niah({.lengths = {}}, *counter), contains("--lengths"));
  REQUIRE_THROWS_WITH(kvgate::niah::generate_niah({.lengths = {4096}, .depths = {120}}, *counter), contains("--depths"));
  REQUIRE_THROWS_WITH(kvgate::niah::parse_value_type("emoji", "--value-type"), contains("numbers, uuids or words"));
  REQUIRE_THROWS_WITH(kvgate::parse_depths("0,50,abc", "--depths"), contains("\"abc\" is not a depth"));
  REQUIRE_THROWS_WITH(kvgate::parse_depths("0,101", "--depths"), contains("\"101\""));
}

TEST_CASE("niah: Kamradt depth grids, linear and sigmoid", "[niah]") {
  CHECK(kvgate::depth_grid(11, kvgate::DepthSpacing::linear) == std::vector<double>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  CHECK(kvgate::depth_grid(4, kvgate::DepthSpacing::linear) == std::vector<double>{0, 33, 67, 100});
  CHECK(kvgate::depth_grid(1, kvgate::DepthSpacing::linear) == std::vector<double>{0});
  // logistic(x) = round(100 * sigmoid(-0.1 (x - 50)), 3), ends kept; sorted.
  const auto s = kvgate::depth_grid(5, kvgate::DepthSpacing::sigmoid);
  REQUIRE(s.size() == 5);
  CHECK(s[0] == 0);
  CHECK(s[1] == kvtest::Approx(7.586));
  CHECK(s[2] == kvtest::Approx(50.0));
  CHECK(s[3] == kvtest::Approx(92.414));
  CHECK(s[4] == 100);
  CHECK_THROWS_AS(kvgate::depth_grid(0, kvgate::DepthSpacing::linear), kvgate::Error);
}

TEST_CASE("niah grader: correct, extra text, wrong, inside a longer number, empty, reasoning", "[niah][grader]") {
  Trial t;
  t.id = "niah/4096/0001";
  t.task = "niah";
  t.bucket = 4096;
  t.input = {{"prompt", "x"}};
  t.target = "4417926";
  t.grader = {{"name", "niah"}};
  t.meta = {{"depth", 30.0}, {"depth_actual", 30.4}, {"prompt_tokens", 4080}, {"value_type", "numbers"}, {"key", "amber-kettle"}};

  auto g = grade(t, "4417926");
  CHECK(g.passed);
  CHECK(g.score == 1.0);
  CHECK(g.value == kvgate::GradeValue::correct);
  CHECK(g.details.at("ruler_substring") == 1.0);
  CHECK(g.details.at("depth") == 30.0);
  CHECK(g.details.at("depth_actual") == 30.4);
  CHECK(g.details.at("bucket") == 4096);
  CHECK(g.details.at("prompt_tokens") == 4080);

  CHECK(grade(t, "  The special magic number for amber-kettle mentioned in the provided text is 4417926.\n").passed);
  CHECK(grade(t, "<think>it could be 1111111</think>\n\nThe number is **4417926**").passed);

  g = grade(t, "The number is 4417925.");
  CHECK_FALSE(g.passed);
  CHECK(g.value == kvgate::GradeValue::incorrect);
  CHECK(g.extracted == "4417925");
  CHECK(g.details.at("ruler_substring") == 0.0);

  g = grade(t, "It is 44179260.");  // RULER's substring match counts this; the exact token does not
  CHECK_FALSE(g.passed);
  CHECK(g.details.at("ruler_substring") == 1.0);

  g = grade(t, "<think>4417926</think>I do not know.");  // only the final answer counts
  CHECK_FALSE(g.passed);
  CHECK_FALSE(grade(t, "<think>It must be 4417926, let me check").passed);  // ran out of tokens while thinking
  CHECK(grade(t, "so it is 4417926.</think>4417926").passed);               // the template opened the block

  g = grade(t, "   \n");
  CHECK_FALSE(g.passed);
  CHECK(g.value == kvgate::GradeValue::no_answer);
  CHECK(g.extracted == "[invalid]");

  t.target = "Amber-Kettle";  // word values: exact case for the pass, RULER ignores case
  g = grade(t, "amber-kettle");
  CHECK_FALSE(g.passed);
  CHECK(g.details.at("ruler_substring") == 1.0);
  CHECK(grade(t, "(Amber-Kettle)").passed);

  t.target = 5;
  CHECK_THROWS_WITH(grade(t, "5"), contains("niah/4096/0001") && contains("regenerate"));
}

TEST_CASE("niah grader: every generated trial passes its own correct answer and fails a wrong one", "[niah][grader]") {
  auto counter = kvgate::make_estimating_token_counter();
  for (auto vt : {kvgate::niah::ValueType::numbers, kvgate::niah::ValueType::uuids, kvgate::niah::ValueType::words}) {
    const auto trials = kvgate::niah::generate_niah({.seed = 1, .lengths = {2048}, .per_bucket = 3, .value_type = vt}, *counter);
    for (const Trial& t : trials) {
      const std::string key = t.meta.at("key");
      CHECK(grade(t, "The special magic value for " + key + " is " + t.target.get<std::string>() + ".").passed);
      CHECK_FALSE(grade(t, "The special magic value for " + key + " is unknown.").passed);
    }
  }
}

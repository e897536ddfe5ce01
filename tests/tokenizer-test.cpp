// The Hugging Face tokenizer: the Qwen3 goldens (ids made by HF tokenizers), round trips, bad input,
// and the loader's errors for what it cannot reproduce exactly.
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/test_util.h"
#include "harness/tokenizer/byte_level.h"
#include "harness/tokenizer/normalizer.h"
#include "harness/tokenizer/token_counter.h"
#include "harness/tokenizer/tokenizer.h"
#include "harness/tokenizer/utf8.h"

using kvgate::Error;
using kvgate::Tokenizer;
using kvtest::contains;
using nlohmann::json;

namespace {
std::string qwen3_dir() { return kvtest::data_dir() + "/tokenizers/qwen3"; }

const Tokenizer& qwen3() {
  static const Tokenizer t = Tokenizer::load(qwen3_dir() + "/tokenizer.json");
  return t;
}

std::vector<json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// A minimal byte-level BPE tokenizer.json: the 256 byte characters plus "ab" and "abc".
json tiny_tokenizer() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[kvgate::tok::bytes_to_byte_level(std::string(1, static_cast<char>(b)))] = b;
  vocab["ab"] = 256;
  vocab["abc"] = 257;
  return json{{"version", "1.0"},
              {"added_tokens", json::array({{{"id", 258}, {"content", "<|end|>"}, {"special", true}, {"normalized", false},
                                              {"lstrip", false}, {"rstrip", false}, {"single_word", false}}})},
              {"normalizer", nullptr},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
              {"post_processor", nullptr},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"a b", json::array({"ab", "c"})})}}}};
}
}  // namespace

TEST_CASE("tokenizer: all 501 Qwen3 goldens give HF's ids exactly", "[tokenizer]") {
  const auto golden = read_jsonl(qwen3_dir() + "/golden.jsonl");
  REQUIRE(golden.size() == 501);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const std::string text = golden[i]["text"].get<std::string>();
    const auto want = golden[i]["ids"].get<std::vector<std::int32_t>>();
    const auto got = qwen3().encode(text);
    if (got != want) {
      ++mismatches;
      UNSCOPED_INFO("golden line " << i + 1 << ": " << json(text).dump());
    }
    CHECK(qwen3().count(text) == want.size());
  }
  CHECK(mismatches == 0);
}

TEST_CASE("tokenizer: decode(encode(x)) is x (its NFC form for the 7 non-NFC goldens)", "[tokenizer]") {
  std::size_t non_nfc = 0;
  for (const auto& g : read_jsonl(qwen3_dir() + "/golden.jsonl")) {
    const std::string text = g["text"].get<std::string>();
    const std::string nfc = kvgate::tok::normalize_full(text, kvgate::tok::NormalForm::NFC);
    non_nfc += nfc != text;
    CHECK(qwen3().decode(qwen3().encode(text)) == nfc);
    // HF's own ids decode to the same text.
    CHECK(qwen3().decode(g["ids"].get<std::vector<std::int32_t>>()) == nfc);
  }
  CHECK(non_nfc == 7);
}

TEST_CASE("tokenizer: special tokens, lookups and vocabulary", "[tokenizer]") {
  const Tokenizer& t = qwen3();
  CHECK(t.vocab_size() == 151669);
  CHECK(t.token_to_id("<|im_end|>") == 151645);
  CHECK(t.token_to_id("<|endoftext|>") == 151643);
  CHECK(t.id_to_token(151644) == std::optional<std::string>("<|im_start|>"));
  CHECK(t.id_to_token(9707) == std::optional<std::string>("Hello"));
  CHECK_FALSE(t.id_to_token(-1));
  CHECK_FALSE(t.id_to_token(151669));
  CHECK(t.is_special(151645));
  CHECK_FALSE(t.is_special(151667));  // <think> is added but not special
  CHECK(t.special_tokens().eos.text == "<|im_end|>");
  CHECK(t.special_tokens().eos.id == 151645);
  CHECK(t.special_tokens().pad.id == 151643);
  CHECK_FALSE(t.special_tokens().bos.id);
  // Special tokens are matched before the model, inside words too.
  const auto ids = t.encode("a<|im_end|>b<think>");
  CHECK(ids == std::vector<std::int32_t>{64, 151645, 65, 151667});
  CHECK(t.decode(ids) == "a<|im_end|>b<think>");
  CHECK(t.decode(ids, true) == "ab<think>");
  // Qwen's post-processor adds nothing.
  CHECK(t.encode("hi", true) == t.encode("hi", false));
}

TEST_CASE("tokenizer: empty text, 1 MB single line, runs of spaces and digits", "[tokenizer]") {
  const Tokenizer& t = qwen3();
  CHECK(t.encode("").empty());
  CHECK(t.count("") == 0);
  CHECK(t.decode(std::vector<std::int32_t>{}).empty());

  std::string line;
  for (int i = 0; line.size() < (1 << 20); ++i) line += "word" + std::to_string(i % 977) + " ";
  const auto ids = t.encode(line);
  CHECK(ids.size() > line.size() / 8);
  CHECK(t.decode(ids) == line);
  // A 1 MB word without boundaries goes through the O(n log n) merge path.
  const std::string word(1 << 20, 'a');
  const auto wids = t.encode(word);
  CHECK(t.decode(wids) == word);
  const std::string spaces(1 << 20, ' ');
  CHECK(t.decode(t.encode(spaces)) == spaces);
  // Digits are split one at a time.
  CHECK(t.encode("12345").size() == 5);
}

TEST_CASE("tokenizer: invalid UTF-8 input is an error naming the byte; decode repairs like HF", "[tokenizer]") {
  const Tokenizer& t = qwen3();
  try {
    t.encode(std::string("ok \xC3\x28 bad"));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), contains("not valid UTF-8"));
    CHECK_THAT(e.what(), contains("byte 3"));
  }
  CHECK_THROWS_AS(t.count(std::string("\xED\xA0\x80")), Error);  // a surrogate
  CHECK_THROWS_AS(t.count(std::string("\xC0\xAF")), Error);      // overlong
  CHECK_THROWS_AS(t.count(std::string("abc\xF0\x9F")), Error);   // truncated
  // "€" is three byte tokens; half of it decodes to U+FFFD as HF does.
  const auto euro = t.encode("€");
  REQUIRE(euro.size() >= 1);
  std::vector<std::int32_t> bytes;
  for (const char c : std::string("\xE2\x82\xAC")) bytes.push_back(*t.token_to_id(kvgate::tok::bytes_to_byte_level(std::string(1, c))));
  CHECK(t.decode(bytes) == "€");
  CHECK(t.decode(std::vector<std::int32_t>(bytes.begin(), bytes.begin() + 2)) == "\xEF\xBF\xBD");
  CHECK(t.decode(std::vector<std::int32_t>{bytes[1], bytes[0]}) == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("tokenizer: the stream decoder holds partial characters", "[tokenizer]") {
  const Tokenizer& t = qwen3();
  std::vector<std::int32_t> ids;
  for (const char c : std::string("a\xE2\x82\xAC" "b")) ids.push_back(*t.token_to_id(kvgate::tok::bytes_to_byte_level(std::string(1, c))));
  kvgate::StreamDecoder d(t);
  std::vector<std::string> parts;
  for (const auto id : ids) parts.push_back(d.push(id));
  CHECK(parts == std::vector<std::string>{"a", "", "", "€", "b"});
  CHECK(d.finish().empty());
  kvgate::StreamDecoder cut(t);
  cut.push(ids[1]);
  CHECK(cut.finish() == "\xEF\xBF\xBD");
}

TEST_CASE("tokenizer: UTF-8 helpers", "[tokenizer]") {
  using namespace kvgate::tok;
  CHECK(find_invalid_utf8("plain ascii, long enough for the fast path") == kValidUtf8);
  CHECK(find_invalid_utf8("caf\xC3\xA9") == kValidUtf8);
  CHECK(find_invalid_utf8("caf\xC3") == 3);
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0);  // > U+10FFFF
  // Maximal subparts: one U+FFFD each (Unicode's recommendation, Rust and Python agree).
  CHECK(utf8_lossy("a\xF0\x9F\x98" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(utf8_lossy("\xFF\xFE") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(utf8_lossy("\xE0\x80\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(complete_utf8_prefix("ab\xE2\x82") == 2);
  CHECK(complete_utf8_prefix("ab\xE2\x82\xAC") == 5);
  CHECK(complete_utf8_prefix("ab\xFF") == 3);
}

TEST_CASE("tokenizer: NFC fast path equals full NFC", "[tokenizer]") {
  using namespace kvgate::tok;
  // Combining marks, precomposed letters, Hangul jamo and syllables, singletons, CJK, ASCII.
  const std::vector<std::string> pieces = {"a", "e", "\xCC\x81", "\xCC\xA3", "\xC3\xA9", "\xE1\x84\x80", "\xE1\x85\xA1",
                                           "\xE1\x86\xA8", "\xEA\xB0\x80", "\xE2\x84\xAB", "\xE4\xB8\xAD", " ", "\xF0\x9F\x98\x80",
                                           "\xCD\x85", "\xE0\xA4\xA8", "\xE0\xA4\xBC", "\xEF\xAC\x80"};
  std::uint64_t state = 12345;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string s;
    const int len = 1 + static_cast<int>(trial % 9);
    for (int k = 0; k < len; ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      s += pieces[(state >> 33) % pieces.size()];
    }
    std::string fast;
    const std::string want = normalize_full(s, NormalForm::NFC);
    const std::string got = nfc_fast(s, fast) ? fast : s;
    INFO(json(s).dump());
    REQUIRE(got == want);
  }
}

TEST_CASE("tokenizer: a minimal GPT-2 style tokenizer (string and pair merges, ByteLevel regex)", "[tokenizer]") {
  const Tokenizer t = Tokenizer::from_strings(tiny_tokenizer().dump(), "", "tiny.json");
  CHECK(t.encode("abc") == std::vector<std::int32_t>{257});
  CHECK(t.encode("ab ab") == std::vector<std::int32_t>{256, 32, 256});  // " ab" is Ġ + ab
  CHECK(t.decode(t.encode("ab abc x<|end|>")) == "ab abc x<|end|>");
  CHECK(t.encode("x<|end|>").back() == 258);
  CHECK(t.vocab_size() == 259);
  CHECK_FALSE(t.has_chat_template());
  // No template: the ChatML fallback.
  kvgate::ChatOptions o;
  o.add_generation_prompt = true;
  CHECK(t.apply_chat_template(nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])"), o) ==
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("tokenizer: loader errors name the file and the reason", "[tokenizer]") {
  const auto load_error = [](const json& j) {
    try {
      Tokenizer::from_strings(j.dump(), "", "x/tokenizer.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json unigram = tiny_tokenizer();
  unigram["model"] = {{"type", "Unigram"}, {"vocab", json::array()}};
  CHECK_THAT(load_error(unigram), contains("model type \"Unigram\" is not supported"));
  json wordpiece = tiny_tokenizer();
  wordpiece["model"]["type"] = "WordPiece";
  CHECK_THAT(load_error(wordpiece), contains("WordPiece"));
  json meta = tiny_tokenizer();
  meta["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "_"}};
  CHECK_THAT(load_error(meta), contains("pre_tokenizer \"Metaspace\" is not supported"));
  json lower = tiny_tokenizer();
  lower["normalizer"] = {{"type", "Lowercase"}};
  CHECK_THAT(load_error(lower), contains("normalizer \"Lowercase\" is not supported"));
  json no_byte_level = tiny_tokenizer();
  no_byte_level["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "\\s+"}}}, {"behavior", "Isolated"}};
  CHECK_THAT(load_error(no_byte_level), contains("no ByteLevel step"));
  json bad_merge = tiny_tokenizer();
  bad_merge["model"]["merges"] = json::array({"a zz"});
  CHECK_THAT(load_error(bad_merge), contains("missing from the vocab"));
  json bad_regex = tiny_tokenizer();
  bad_regex["pre_tokenizer"] = {{"type", "Sequence"},
                                {"pretokenizers", json::array({{{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}},
                                                               {{"type", "ByteLevel"}}})}};
  CHECK_THAT(load_error(bad_regex), contains("does not compile"));
  json decoder = tiny_tokenizer();
  decoder["decoder"] = {{"type", "Metaspace"}};
  CHECK_THAT(load_error(decoder), contains("decoder \"Metaspace\" is not supported"));
  json dropout = tiny_tokenizer();
  dropout["model"]["dropout"] = 0.1;
  CHECK_THAT(load_error(dropout), contains("dropout"));
  CHECK_THAT(load_error(json::array()), contains("not a Hugging Face tokenizer.json"));
  try {
    Tokenizer::from_strings("{not json", "", "x/tokenizer.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), contains("not valid JSON"));
  }
  try {
    Tokenizer::load("/nonexistent/tokenizer.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), contains("cannot read"));
  }
  try {
    Tokenizer::from_strings(tiny_tokenizer().dump(), R"({"chat_template": "{% for m in messages %}{{ m.content }"})", "x/tokenizer.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), contains("tokenizer_config.json"));
    CHECK_THAT(e.what(), contains("line 1"));
  }
}

TEST_CASE("tokenizer: the folder of a checkpoint loads like its tokenizer.json", "[tokenizer]") {
  const Tokenizer t = Tokenizer::load(qwen3_dir());
  CHECK(t.encode("Hello world") == qwen3().encode("Hello world"));
  CHECK(t.has_chat_template());
}

TEST_CASE("tokenizer: fixtures made by HF tokenizers: every pipeline gives HF's ids and decodes", "[tokenizer]") {
  for (const char* name : {"tiny-bpe", "llama3-like", "nfkc-digits", "split-merged-previous", "split-merged-next"}) {
    const std::string dir = std::string("tests/data/tokenizers/") + name;
    const Tokenizer t = Tokenizer::load(dir + "/tokenizer.json");
    std::size_t n = 0;
    for (const auto& g : read_jsonl(dir + "/golden.jsonl")) {
      const std::string text = g["text"].get<std::string>();
      INFO(name << ": " << json(text).dump());
      const auto ids = g["ids"].get<std::vector<std::int32_t>>();
      CHECK(t.encode(text) == ids);
      CHECK(t.encode(text, true) == g["ids_special"].get<std::vector<std::int32_t>>());
      CHECK(t.decode(ids) == g["decoded"].get<std::string>());
      CHECK(t.decode(ids, true) == g["decoded_skip"].get<std::string>());
      ++n;
    }
    CHECK(n > 70);
  }
}

TEST_CASE("tokenizer: a small trained tokenizer with a ChatML template (the demo model's shape)", "[tokenizer]") {
  const Tokenizer t = Tokenizer::load("tests/data/tokenizers/tiny-bpe");
  REQUIRE(t.has_chat_template());
  CHECK(t.special_tokens().eos.text == "<|im_end|>");
  CHECK(t.special_tokens().eos.id == t.token_to_id("<|im_end|>"));
  kvgate::ChatOptions o;
  o.add_generation_prompt = true;
  const auto msgs = nlohmann::ordered_json::parse(R"([{"role":"system","content":"Be brief."},{"role":"user","content":"2+2?"}])");
  const std::string text = t.apply_chat_template(msgs, o);
  CHECK(text == kvgate::render_chatml(nlohmann::json(msgs), true));
  const auto ids = t.encode_chat(msgs, o);
  CHECK(ids.front() == *t.token_to_id("<|im_start|>"));
  CHECK(t.decode(ids) == text);
}

TEST_CASE("tokenizer: threads share one tokenizer (and its word cache) with identical results", "[tokenizer]") {
  const Tokenizer t = Tokenizer::load(qwen3_dir());  // a fresh cache, filled concurrently
  const auto golden = read_jsonl(qwen3_dir() + "/golden.jsonl");
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (std::size_t i = 0; i < golden.size(); ++i) {
        const auto& g = golden[(i * 7 + static_cast<std::size_t>(k) * 131) % golden.size()];
        if (t.encode(g["text"].get<std::string>()) != g["ids"].get<std::vector<std::int32_t>>()) ++mismatches[k];
      }
    });
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

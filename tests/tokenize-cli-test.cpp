// kvgate tokenize end to end: ids, counts, files, JSONL batches in order, decoding, chat, errors.
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

using kvtest::contains;
using kvtest::run_kvgate;
using nlohmann::json;

namespace {
std::string qwen3() { return kvtest::data_dir() + "/tokenizers/qwen3/tokenizer.json"; }
}  // namespace

TEST_CASE("tokenize: TEXT gives ids as JSON, --count the number", "[tokenize]") {
  auto r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "Hello world"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out) == json::array({9707, 1879}));
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--count", "Hello world"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n");
}

TEST_CASE("tokenize: --file, --decode and --chat", "[tokenize]") {
  kvtest::TempDir dir;
  kvtest::write_text(dir.file("in.txt"), "What is 2+2?");
  auto r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--file", dir.file("in.txt")});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out) == json::array({3838, 374, 220, 17, 10, 17, 30}));
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--decode", "[3838, 374, 220, 17, 10, 17, 30, 151645]"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "What is 2+2?<|im_end|>\n");
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--decode", "--skip-special-tokens", "[3838, 151645]"});
  CHECK(r.out == "What\n");
  kvtest::write_text(dir.file("chat.json"), R"([{"role": "user", "content": "What is 2+2?"}])");
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--chat", "--file", dir.file("chat.json")});
  CHECK(r.exit_code == 0);
  CHECK(json::parse(r.out) == json::parse("[151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198]"));
}

TEST_CASE("tokenize: --jsonl writes one line per input, in order", "[tokenize]") {
  kvtest::TempDir dir;
  std::string in;
  for (int i = 0; i < 50; ++i) in += json{{"text", "line " + std::to_string(i) + (i % 7 == 0 ? " 東京" : "")}}.dump() + "\n";
  in += "\n";  // blank lines are skipped
  kvtest::write_text(dir.file("in.jsonl"), in);
  auto r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--jsonl", dir.file("in.jsonl")});
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::string line;
  int i = 0;
  while (std::getline(lines, line)) {
    const json row = json::parse(line);
    CHECK(row["text"] == "line " + std::to_string(i) + (i % 7 == 0 ? " 東京" : ""));
    CHECK(row["ids"].is_array());
    CHECK(row["ids"].size() >= 3);
    ++i;
  }
  CHECK(i == 50);
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--jsonl", dir.file("in.jsonl"), "--count"});
  // HF tokenizers: 6 tokens.
  CHECK(json::parse(r.out.substr(0, r.out.find('\n'))) == json::parse(R"({"text": "line 0 東京", "count": 6})"));
  kvtest::write_text(dir.file("ids.jsonl"), "{\"ids\": [9707, 1879]}\n");
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--jsonl", dir.file("ids.jsonl"), "--decode"});
  CHECK(json::parse(r.out) == json::parse(R"({"ids": [9707, 1879], "text": "Hello world"})"));
}

TEST_CASE("tokenize: bad input exits 2 with a message naming it", "[tokenize]") {
  kvtest::TempDir dir;
  auto r = run_kvgate({"tokenize", "--tokenizer", qwen3()});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("exactly one input"));
  r = run_kvgate({"tokenize", "--tokenizer", "/nonexistent/tokenizer.json", "x"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("cannot read"));
  kvtest::write_text(dir.file("bad.jsonl"), "{\"text\": \"ok\"}\n{\"txt\": 1}\n");
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--jsonl", dir.file("bad.jsonl")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("bad.jsonl:2"));
  kvtest::write_text(dir.file("latin1.txt"), "caf\xE9");
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--file", dir.file("latin1.txt")});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("not valid UTF-8"));
  r = run_kvgate({"tokenize", "--tokenizer", qwen3(), "--decode", "[1, \"x\"]"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, contains("integers"));
}

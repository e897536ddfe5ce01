// Chat templates: the 16 Qwen3 renders made by transformers (text and ids), templates cross-checked
// against Jinja2 in transformers' configuration (tests/data/jinja/cases.jsonl, made by
// make_golden.py), and the engine's errors.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/test_util.h"
#include "harness/tokenizer/chat_template.h"
#include "harness/tokenizer/token_counter.h"
#include "harness/tokenizer/tokenizer.h"

using kvgate::ChatOptions;
using kvgate::ChatTemplate;
using kvgate::Error;
using kvgate::Tokenizer;
using kvtest::contains;
using ojson = nlohmann::ordered_json;

namespace {
std::string qwen3_dir() { return kvtest::data_dir() + "/tokenizers/qwen3"; }

const Tokenizer& qwen3() {
  static const Tokenizer t = Tokenizer::load(qwen3_dir() + "/tokenizer.json");
  return t;
}

std::vector<ojson> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<ojson> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(ojson::parse(line));
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string render(const std::string& source, const ojson& messages, ChatOptions o = {}, ojson special = ojson::object()) {
  return ChatTemplate(source, special).render(messages, o);
}

std::string render_error(const std::string& source, const ojson& messages = ojson::array(), ChatOptions o = {}) {
  try {
    render(source, messages, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

const ojson kOneUser = ojson::parse(R"([{"role": "user", "content": "Hi"}])");
}  // namespace

TEST_CASE("chat: the 16 Qwen3 renders of transformers, text and ids", "[chat]") {
  const auto cases = read_jsonl(qwen3_dir() + "/chat_template_golden.jsonl");
  REQUIRE(cases.size() == 16);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i + 1 << ": " << cases[i]["messages"].dump());
    ChatOptions o;
    o.add_generation_prompt = cases[i]["add_generation_prompt"].get<bool>();
    o.variables = cases[i]["kwargs"];
    const std::string text = qwen3().apply_chat_template(cases[i]["messages"], o);
    CHECK(text == cases[i]["text"].get<std::string>());
    CHECK(qwen3().encode_chat(cases[i]["messages"], o) == cases[i]["ids"].get<std::vector<std::int32_t>>());
  }
}

TEST_CASE("chat: templates render as Jinja2 does in transformers' environment", "[chat]") {
  const std::string dir = "tests/data/jinja/templates/";
  const auto cases = read_jsonl("tests/data/jinja/cases.jsonl");
  REQUIRE(cases.size() >= 40);
  std::size_t errors = 0;
  for (const auto& c : cases) {
    const std::string name = c["template"].get<std::string>();
    INFO(name << " / " << c["conversation"].get<std::string>() << " / generation prompt " << c["add_generation_prompt"].dump());
    const std::string source = name == "qwen3" ? qwen3().chat_template_source() : read_file(dir + name + ".jinja");
    ChatOptions o;
    o.add_generation_prompt = c["add_generation_prompt"].get<bool>();
    o.variables = c["variables"];
    o.tools = c["tools"];
    o.now_unix_seconds = 1700000000;
    const ChatTemplate t(source, c["special_tokens"]);
    if (c.contains("error")) {
      ++errors;
      try {
        t.render(c["messages"], o);
        FAIL("expected an error: " << c["error"].get<std::string>());
      } catch (const Error& e) {
        const std::string want = c["error"].get<std::string>();
        // Jinja2's own wording for undefined values differs; raise_exception messages are exact.
        if (want.find("has no element") == std::string::npos) CHECK_THAT(e.what(), contains(want));
        else CHECK_THAT(e.what(), contains("undefined"));
      }
      continue;
    }
    CHECK(t.render(c["messages"], o) == c["text"].get<std::string>());
  }
  CHECK(errors >= 6);
}

TEST_CASE("chat: whitespace control matches Jinja (trim_blocks, lstrip_blocks, -, +)", "[chat]") {
  CHECK(render("a\n{% if true %}\nb\n{% endif %}\nc", kOneUser) == "a\nb\nc");
  CHECK(render("a\n    {% if true %}b{% endif %}", kOneUser) == "a\nb");
  CHECK(render("a  {%- if true -%}  b  {%- endif -%}  c", kOneUser) == "abc");
  CHECK(render("a\n  {%+ if true %}b{% endif %}", kOneUser) == "a\n  b");
  CHECK(render("x {{- ' y' -}} \n z", kOneUser) == "x yz");
  CHECK(render("a\n  {# note #}\nb", kOneUser) == "a\nb");
  CHECK(render("line\n", kOneUser) == "line");      // the final newline goes
  CHECK(render("line\n\n", kOneUser) == "line\n");  // only one
  CHECK(render("a\r\nb", kOneUser) == "a\nb");
}

TEST_CASE("chat: values, scoping and loops", "[chat]") {
  CHECK(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}", kOneUser) == "1");
  CHECK(render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = i %}{% endfor %}{{ ns.x }}", kOneUser) == "2");
  CHECK(render("{% for m in messages %}{{ m.role }}:{{ m.content }}{% endfor %}", kOneUser) == "user:Hi");
  CHECK(render("{{ messages[0].missing is defined }}|{{ messages[5] is defined }}|{{ messages[0].missing }}|", kOneUser) ==
        "False|False||");
  CHECK(render("{{ tools is none }} {{ tools is defined }} {{ documents is none }}", kOneUser) == "True True True");
  CHECK(render("{% macro f(a, b='d') %}[{{ a }}{{ b }}]{% endmacro %}{{ f(1) }}{{ f(1, b=2) }}{{ f(a=3) }}", kOneUser) == "[1d][12][3d]");
  CHECK(render("{{ bos_token }}{{ messages | length }}", kOneUser, {}, ojson{{"bos_token", "<s>"}}) == "<s>1");
  ChatOptions o;
  o.variables = {{"enable_thinking", false}, {"bos_token", "override"}};
  CHECK(render("{{ enable_thinking is false }} {{ bos_token }}", kOneUser, o, ojson{{"bos_token", "<s>"}}) == "True override");
  o = {};
  o.now_unix_seconds = 0;
  CHECK(render("{{ strftime_now('%Y-%m-%d %b') }}", kOneUser, o) == "1970-01-01 Jan");
}

TEST_CASE("chat: errors name the template line", "[chat]") {
  CHECK_THAT(render_error("ok\n{% if x %}\nunclosed"), contains("line 3"));
  CHECK_THAT(render_error("ok\n{% if x %}\nunclosed"), contains("endif"));
  CHECK_THAT(render_error("{{ 1 + }}"), contains("line 1"));
  CHECK_THAT(render_error("{% include 'x.jinja' %}"), contains("not supported"));
  CHECK_THAT(render_error("{{ raise_exception('no system role') }}"), contains("no system role"));
  CHECK_THAT(render_error("a\n{{ nothing.attr }}"), contains("line 2"));
  CHECK_THAT(render_error("a\n{{ nothing.attr }}"), contains("'nothing' is undefined"));
  CHECK_THAT(render_error("{{ 'a' + 1 }}"), contains("unsupported operand"));
  CHECK_THAT(render_error("{{ messages.append(1) }}"), contains("unsafe"));
  CHECK_THAT(render_error("{% for i in range(200000) %}{% endfor %}"), contains("range too big"));
  CHECK_THAT(render_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), contains("recursion"));
  CHECK_THAT(render_error("{{ 1 | nosuchfilter }}"), contains("no filter named 'nosuchfilter'"));
  CHECK_THAT(render_error("{{ 'abc"), contains("unterminated"));
  CHECK_THAT(render_error("{# open comment"), contains("comment"));
  CHECK_THAT(render_error("{{ x }}", ojson::object()), contains("JSON array"));
  CHECK_THAT(render_error("{{ '\xF2\xF2' }}"), contains("not valid UTF-8"));
  CHECK_THAT(render_error("{{ messages }}", ojson::array({{{"role", "user"}, {"content", "\xC3("}}})), contains("not valid UTF-8"));
}

TEST_CASE("chat: continue_final_message, template selection and the ChatML fallback", "[chat]") {
  const auto msgs = ojson::parse(R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "The answer is"}])");
  ChatOptions o;
  o.continue_final_message = true;
  // Qwen3 puts an empty think block before the final assistant turn; the text ends inside the message.
  CHECK(qwen3().apply_chat_template(msgs, o) ==
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nThe answer is");
  o.add_generation_prompt = true;
  CHECK_THROWS_AS(qwen3().apply_chat_template(msgs, o), Error);

  const std::string tiny = read_file("tests/data/tokenizers/tiny-bpe/tokenizer.json");
  const Tokenizer named = Tokenizer::from_strings(
      tiny, R"({"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]})", "named");
  ChatOptions t;
  CHECK(named.apply_chat_template(kOneUser, t) == "D");
  t.tools = ojson::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  CHECK(named.apply_chat_template(kOneUser, t) == "T");
  t.template_name = "nope";
  CHECK_THROWS_WITH(named.apply_chat_template(kOneUser, t), Catch::Matchers::Contains("default, tool_use"));

  const Tokenizer plain = Tokenizer::from_strings(tiny, "", "plain");
  ChatOptions g;
  g.add_generation_prompt = true;
  CHECK(plain.apply_chat_template(kOneUser, g) == kvgate::render_chatml(nlohmann::json(kOneUser), true));
}

TEST_CASE("chat: the exact token counter counts whole rendered inputs", "[chat]") {
  const auto counter = kvgate::open_token_counter({.tokenizer_path = qwen3_dir() + "/tokenizer.json", .tokenize_url = "", .model = ""});
  CHECK(counter->exact());
  CHECK_THAT(counter->source(), contains("tokenizer.json:"));
  CHECK(counter->count_text("Hello world") == 2);
  CHECK(counter->count_text("") == 0);
  // count_chat = ids of the template with the generation prompt.
  const auto golden = read_jsonl(qwen3_dir() + "/chat_template_golden.jsonl");
  CHECK(counter->count_chat(nlohmann::json(golden[0]["messages"])) == golden[0]["ids"].size());
  CHECK_THROWS_AS(kvgate::open_token_counter({.tokenizer_path = "/nonexistent/tokenizer.json", .tokenize_url = "", .model = ""}), Error);
}

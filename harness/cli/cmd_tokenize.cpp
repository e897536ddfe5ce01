// kvgate tokenize: ids of a text with a Hugging Face tokenizer.json (identical to HF tokenizers),
// counts, chat renders, JSONL batches, and decoding.
#include <iostream>
#include <memory>

#include "harness/cli/cli_common.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/tokenizer/tokenizer.h"

namespace kvgate::cli {

namespace {
struct TokenizeOptions {
  std::string tokenizer, text, file, jsonl;
  bool count = false, decode = false, add_special_tokens = false, skip_special_tokens = false, chat = false;
};

std::vector<std::int32_t> parse_ids(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) throw Error(where + ": --decode expects a JSON array of token ids, e.g. [9707, 1879]");
  std::vector<std::int32_t> ids;
  for (const auto& v : j) {
    if (!v.is_number_integer()) throw Error(where + ": token ids must be integers, got " + v.dump());
    ids.push_back(v.get<std::int32_t>());
  }
  return ids;
}

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

// The ids of one input: text, or with --chat a messages array rendered by the template.
std::vector<std::int32_t> encode_input(const Tokenizer& t, const TokenizeOptions& o, const std::string& input, const std::string& where) {
  if (!o.chat) return t.encode(input, o.add_special_tokens);
  const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(parse_json(input, where).dump());
  ChatOptions c;
  c.add_generation_prompt = true;
  return t.encode_chat(messages, c);
}

int run_tokenize(const TokenizeOptions& o) {
  const int sources = !o.text.empty() + !o.file.empty() + !o.jsonl.empty();
  if (sources != 1) throw Error("tokenize: give exactly one input: TEXT, --file F or --jsonl IN");
  const Tokenizer t = Tokenizer::load(o.tokenizer);

  if (!o.jsonl.empty()) {
    for_each_jsonl(o.jsonl, [&](nlohmann::json&& row, std::size_t line) {
      const std::string where = o.jsonl + ":" + std::to_string(line);
      nlohmann::ordered_json out;
      if (o.decode) {
        if (!row.is_object() || !row.contains("ids")) throw Error(where + ": each line needs \"ids\": [...] with --decode");
        const auto ids = parse_ids(row["ids"], where);
        out["ids"] = ids;
        out["text"] = t.decode(ids, o.skip_special_tokens);
      } else {
        if (!row.is_object() || !row.contains("text") || !row["text"].is_string())
          throw Error(where + ": each line needs \"text\": \"...\"");
        const std::string text = row["text"].get<std::string>();
        const auto ids = o.chat ? encode_input(t, o, text, where) : t.encode(text, o.add_special_tokens);
        out["text"] = text;
        if (o.count) out["count"] = ids.size();
        else out["ids"] = ids;
      }
      std::cout << out.dump() << '\n';
    });
    std::cout.flush();
    return 0;
  }

  const std::string where = o.file.empty() ? "TEXT" : o.file;
  const std::string input = o.file.empty() ? o.text : read_file(o.file);
  if (o.decode) {
    std::cout << t.decode(parse_ids(parse_json(input, where), where), o.skip_special_tokens) << '\n';
    return 0;
  }
  const auto ids = encode_input(t, o, input, where);
  if (o.count) std::cout << ids.size() << '\n';
  else std::cout << nlohmann::json(ids).dump() << '\n';
  return 0;
}
}  // namespace

void register_tokenize(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* sub = app.add_subcommand("tokenize", "Token ids of a text as JSON (identical to Hugging Face tokenizers)");
  sub->add_option("--tokenizer", o->tokenizer, "tokenizer.json (or its folder; tokenizer_config.json beside it gives the chat template)")->required();
  sub->add_option("text", o->text, "Text to encode (with --decode: a JSON array of ids)");
  sub->add_option("--file", o->file, "Encode a file's contents (with --decode: a file holding a JSON array of ids)");
  sub->add_option("--jsonl", o->jsonl, "Read {\"text\": ...} lines, write {\"text\", \"ids\"} lines in order (with --decode: {\"ids\"} -> {\"ids\", \"text\"})");
  sub->add_flag("--count", o->count, "Print only the number of tokens");
  sub->add_flag("--decode", o->decode, "Decode: the input is a JSON array of ids");
  sub->add_flag("--add-special-tokens", o->add_special_tokens, "Apply the post-processor (e.g. Llama-3's BOS), as HF encode(add_special_tokens=True)");
  sub->add_flag("--skip-special-tokens", o->skip_special_tokens, "With --decode: leave out special tokens");
  sub->add_flag("--chat", o->chat, "The input is a JSON messages array: render it with the chat template and the generation prompt, then encode");
  commands.add(sub, [o] { return run_tokenize(*o); });
}

}  // namespace kvgate::cli

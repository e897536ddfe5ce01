// kvgate tokenize: ids of a text with a Hugging Face tokenizer.json.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct TokenizeOptions {
  std::string tokenizer, text, file, jsonl;
  bool count = false, decode = false;
};
}  // namespace

void register_tokenize(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* sub = app.add_subcommand("tokenize", "Token ids of a text as JSON (identical to Hugging Face tokenizers)");
  sub->add_option("--tokenizer", o->tokenizer, "tokenizer.json")->required();
  sub->add_option("text", o->text, "Text to encode");
  sub->add_option("--file", o->file, "Encode a file's contents");
  sub->add_option("--jsonl", o->jsonl, "Read {\"text\": ...} lines, write {\"text\", \"ids\"} lines in order");
  sub->add_flag("--count", o->count, "Print only the number of tokens");
  sub->add_flag("--decode", o->decode, "Decode: the input is a JSON array of ids");
  commands.add(sub, [o] { return not_built("tokenize", 4); });
}

}  // namespace kvgate::cli

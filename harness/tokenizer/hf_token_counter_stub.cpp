// Placeholder until the tokenizer module (issue #4) lands: it replaces this file.
#include "core/error.h"
#include "tokenizer/token_counter.h"

namespace kvgate {
std::unique_ptr<TokenCounter> make_hf_token_counter(const std::string& path) {
  throw Error("--tokenizer " + path + ": the Hugging Face tokenizer is not built yet (issue #4); use --tokenize-url or omit it for an estimate");
}
}  // namespace kvgate

// Placeholder until the retrieval-tasks issue (#5) lands a /tokenize client: it replaces this file.
#include "core/error.h"
#include "tokenizer/token_counter.h"

namespace kvgate {
std::unique_ptr<TokenCounter> make_remote_token_counter(const std::string& url, const std::string&) {
  throw Error("--tokenize-url " + url + ": the /tokenize client is not built yet (issue #5); use --tokenizer or omit it for an estimate");
}
}  // namespace kvgate

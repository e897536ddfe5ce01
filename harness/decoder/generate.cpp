#include "harness/decoder/generate.h"

#include <algorithm>

#include "harness/core/error.h"
#include "harness/core/rng.h"

namespace kvgate::decoder {

Generation generate(Session& session, std::span<const int> prompt, const GenerateOptions& o) {
  if (prompt.empty()) throw Error("generate: the prompt has no tokens");
  if (!o.stop.empty() && !o.token_text) throw Error("generate: stop strings need a tokenizer to decode text", kExitInternal);
  for (const std::string& s : o.stop)
    if (s.empty()) throw Error("stop strings must not be empty");
  Generation g;
  g.prompt_tokens = static_cast<int>(prompt.size());
  g.finish_reason = "length";
  if (o.max_tokens <= 0) return g;
  session.reset();
  const int vocab = session.model().config().vocab_size;
  std::vector<float> last(static_cast<std::size_t>(vocab));
  session.forward(prompt, 1, [&](int, const float* logits) { std::copy(logits, logits + vocab, last.begin()); });
  const float* logits = last.data();
  Rng rng(o.seed);
  kernels::SamplerWorkspace ws;
  std::size_t longest_stop = 0;
  for (const std::string& s : o.stop) longest_stop = std::max(longest_stop, s.size());
  for (int i = 0; i < o.max_tokens; ++i) {
    const double u = o.sampler.temperature > 0.0 ? rng.uniform() : 0.0;
    const int token = kernels::sample_ref(logits, vocab, o.sampler, u, ws);
    g.tokens.push_back(token);
    if (o.on_token && !o.on_token(token)) {
      g.finish_reason = "cancelled";
      break;
    }
    if (std::find(o.stop_token_ids.begin(), o.stop_token_ids.end(), token) != o.stop_token_ids.end()) {
      g.finish_reason = "stop";
      break;
    }
    if (o.token_text) {
      const std::size_t before = g.text.size();
      g.text += o.token_text(token);
      // A stop string can only end in the new bytes: search from where it could start.
      const std::size_t from = before >= longest_stop ? before - longest_stop + 1 : 0;
      std::size_t cut = std::string::npos;
      for (const std::string& s : o.stop) cut = std::min(cut, g.text.find(s, from));
      if (cut != std::string::npos) {
        g.text.resize(cut);
        g.finish_reason = "stop";
        break;
      }
    }
    if (i + 1 == o.max_tokens) break;  // no forward pass for a token that will not be used
    logits = session.step(token);
  }
  return g;
}

}  // namespace kvgate::decoder

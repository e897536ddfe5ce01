// Decoding one sequence with the CPU session: greedy or seeded sampling (kernels::sample_ref, one
// kvgate::Rng::uniform() draw per sampled token, none when greedy), stop tokens, stop strings and a
// token budget. The same prompt, options and seed give the same tokens on every machine.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "harness/decoder/session.h"

namespace kvgate::decoder {

struct GenerateOptions {
  kernels::SamplerParams sampler{};  // temperature 0: greedy
  std::uint64_t seed = 0;          // the Rng stream of this sequence (use derive_seed per trial/repeat)
  int max_tokens = 256;
  std::vector<int> stop_token_ids{};    // e.g. the model's eos ids: finish "stop", not part of text
  std::vector<std::string> stop{};      // stop strings on the decoded text: finish "stop", cut before them
  // The bytes of one token (byte-level BPE: concatenating pieces decodes the text). Required for
  // stop strings and text; without it only ids come back.
  std::function<std::string(int id)> token_text{};
  // Called with each generated id as soon as it is chosen (streaming); returning false stops the
  // generation with finish_reason "cancelled" (a client that went away, a stop signal).
  std::function<bool(int id)> on_token{};
};

struct Generation {
  std::vector<int> tokens;      // generated ids, a final stop token included
  std::string text;             // decoded, without a stop token's text, cut before a stop string
  std::string finish_reason;    // "stop", "length", or "cancelled" (on_token said stop)
  int prompt_tokens = 0;
};

// Resets the session, runs the prompt (non-empty), then decodes.
Generation generate(Session& session, std::span<const int> prompt, const GenerateOptions& options);

}  // namespace kvgate::decoder

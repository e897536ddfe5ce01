#include "harness/decoder/model_text.h"

#include <algorithm>
#include <filesystem>

#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate::decoder {

ModelText ModelText::load(const std::string& model_dir, const ModelConfig& config) {
  const std::string path = (std::filesystem::path(model_dir) / "tokenizer.json").string();
  if (!std::filesystem::exists(path))
    throw Error(model_dir + ": no tokenizer.json: the reference decoder needs the checkpoint's own tokenizer to turn "
                            "prompts into ids (copy it from the model's repository)");
  return ModelText(Tokenizer::load(path), config);
}

ModelText::ModelText(Tokenizer tokenizer, const ModelConfig& config)
    : tokenizer_(std::move(tokenizer)), vocab_size_(config.vocab_size), max_model_len_(config.max_position_embeddings) {
  for (int id : config.eos_token_ids)
    if (std::find(stop_ids_.begin(), stop_ids_.end(), id) == stop_ids_.end()) stop_ids_.push_back(id);
  if (const auto& eos = tokenizer_.special_tokens().eos.id; eos && *eos < vocab_size_ &&
      std::find(stop_ids_.begin(), stop_ids_.end(), *eos) == stop_ids_.end())
    stop_ids_.push_back(*eos);
  if (stop_ids_.empty())
    log_warn(tokenizer_.path() + ": no eos token in config.json, generation_config.json or tokenizer_config.json: "
                                 "generations end only at max_tokens or a stop string");
  if (tokenizer_.vocab_size() > static_cast<std::size_t>(vocab_size_))
    log_warn(tokenizer_.path() + ": the tokenizer has " + std::to_string(tokenizer_.vocab_size()) +
             " tokens but config.json's vocab_size is " + std::to_string(vocab_size_) +
             ": prompts that use the extra ids will be refused");
}

std::vector<int> ModelText::encode_chat(const nlohmann::ordered_json& messages, const ChatOptions& options) const {
  const std::vector<std::int32_t> ids = tokenizer_.encode_chat(messages, options);
  return {ids.begin(), ids.end()};
}

std::vector<int> ModelText::encode_prompt(std::string_view text) const {
  const std::vector<std::int32_t> ids = tokenizer_.encode(text, true);
  return {ids.begin(), ids.end()};
}

std::function<std::string(int)> ModelText::token_text(bool skip_special_tokens) const {
  return [tok = tokenizer_, skip_special_tokens](int id) {
    const std::int32_t one[1] = {id};
    return tok.decode_bytes(one, skip_special_tokens);
  };
}

GenerateOptions ModelText::generate_options(const TextSampling& s) const {
  return GenerateOptions{.sampler = s.sampler,
                         .seed = s.seed,
                         .max_tokens = s.max_tokens,
                         .stop_token_ids = stop_ids_,
                         .stop = s.stop,
                         .token_text = token_text(s.skip_special_tokens)};
}

std::string ModelText::text_of(const Generation& g) { return tok::utf8_lossy(g.text); }

TextStreamer::TextStreamer(std::function<std::string(int)> token_text, std::vector<int> stop_token_ids,
                           const std::vector<std::string>& stop)
    : token_text_(std::move(token_text)), stop_ids_(std::move(stop_token_ids)), stops_(stop) {
  for (const std::string& s : stop) hold_ = std::max(hold_, s.empty() ? 0 : s.size() - 1);
}

std::string TextStreamer::push(int id) {
  if (std::find(stop_ids_.begin(), stop_ids_.end(), id) != stop_ids_.end()) return {};  // not part of the text
  raw_ += token_text_(id);
  std::size_t limit = raw_.size() > hold_ ? raw_.size() - hold_ : 0;
  // A stop string this token completed: the text ends before it (generate() cuts it there). It
  // starts at or after sent_raw_, since the held-back bytes cover every stop still in progress.
  for (const std::string& s : stops_)
    if (std::size_t at = s.empty() ? std::string::npos : raw_.find(s, sent_raw_); at != std::string::npos)
      limit = std::min(limit, at);
  const std::size_t k = tok::complete_utf8_prefix(std::string_view(raw_).substr(0, limit));
  if (k <= sent_raw_) return {};
  std::string out = tok::utf8_lossy(std::string_view(raw_).substr(sent_raw_, k - sent_raw_));
  sent_raw_ = k;
  emitted_ += out;
  return out;
}

std::string TextStreamer::finish(const std::string& final_text) {
  if (final_text.compare(0, emitted_.size(), emitted_) != 0)
    throw Error("streaming: the text sent so far is not a prefix of the generation's text (a kvgate bug)", kExitInternal);
  std::string rest = final_text.substr(emitted_.size());
  emitted_ = final_text;
  return rest;
}

}  // namespace kvgate::decoder

#include "harness/tokenizer/tokenizer.h"

#include <fstream>
#include <sstream>

#include "harness/core/error.h"
#include "harness/tokenizer/byte_level.h"
#include "harness/tokenizer/token_counter.h"
#include "harness/tokenizer/tokenizer_impl.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate {

namespace {
bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool is_directory(const std::string& path) {
  std::ifstream probe(path + "/tokenizer.json");
  return static_cast<bool>(probe);
}
}  // namespace

// ---- encoding

void Tokenizer::Impl::encode_model(std::string_view text, std::vector<std::int32_t>& ids) const {
  pre_tokenizer.run(text, [&](std::string_view word) { model->encode_word(word, ids); });
}

void Tokenizer::Impl::encode_normalized(std::string_view text, std::vector<std::int32_t>& ids) const {
  std::string scratch;
  const std::string_view norm = normalizer.apply(text, scratch);
  if (normalized_matcher.empty()) {
    encode_model(norm, ids);
    return;
  }
  std::vector<tok::Segment> segs;
  normalized_matcher.split(norm, segs);
  for (const auto& s : segs) {
    if (s.id >= 0) ids.push_back(s.id);
    else encode_model(norm.substr(s.begin, s.end - s.begin), ids);
  }
}

void Tokenizer::Impl::encode_into(std::string_view text, bool add_special_tokens, std::vector<std::int32_t>& ids) const {
  if (const std::size_t bad = tok::find_invalid_utf8(text); bad != tok::kValidUtf8)
    throw Error("text to tokenize is not valid UTF-8 (byte " + std::to_string(bad) + " of " + std::to_string(text.size()) +
                "): tokenizers take Unicode text; re-encode the input as UTF-8");
  if (add_special_tokens) ids.insert(ids.end(), prefix_ids.begin(), prefix_ids.end());
  if (raw_matcher.empty()) {
    encode_normalized(text, ids);
  } else {
    std::vector<tok::Segment> segs;
    raw_matcher.split(text, segs);
    for (const auto& s : segs) {
      if (s.id >= 0) ids.push_back(s.id);
      else encode_normalized(text.substr(s.begin, s.end - s.begin), ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), suffix_ids.begin(), suffix_ids.end());
}

std::optional<std::string_view> Tokenizer::Impl::token_of(std::int32_t id) const {
  if (const auto it = added_by_id.find(id); it != added_by_id.end()) return std::string_view(added[it->second].content);
  return model->id_to_token(id);
}

bool Tokenizer::Impl::special(std::int32_t id) const {
  const auto it = added_by_id.find(id);
  return it != added_by_id.end() && added[it->second].special;
}

// ---- public API

Tokenizer Tokenizer::load(const std::string& path) {
  std::string file = path;
  if (is_directory(path)) file = path + "/tokenizer.json";
  std::string text;
  if (!read_file(file, text))
    throw Error("--tokenizer " + path + ": cannot read the file: give the path of a Hugging Face tokenizer.json (or its folder)");
  const std::size_t slash = file.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
  std::string config, jinja_file;
  read_file(dir + "/tokenizer_config.json", config);
  read_file(dir + "/chat_template.jinja", jinja_file);
  return Tokenizer(load_tokenizer_impl(text, config, jinja_file, file));
}

Tokenizer Tokenizer::from_strings(std::string_view tokenizer_json, std::string_view config_json, const std::string& name) {
  return Tokenizer(load_tokenizer_impl(tokenizer_json, config_json, {}, name));
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  impl_->encode_into(text, add_special_tokens, ids);
  return ids;
}

std::size_t Tokenizer::count(std::string_view text, bool add_special_tokens) const {
  thread_local std::vector<std::int32_t> ids;
  ids.clear();
  impl_->encode_into(text, add_special_tokens, ids);
  const std::size_t n = ids.size();
  if (ids.capacity() > (std::size_t{1} << 24)) std::vector<std::int32_t>().swap(ids);
  return n;
}

std::string Tokenizer::decode_bytes(std::span<const std::int32_t> ids, bool skip_special_tokens) const {
  std::string out;
  bool first = true;
  for (const std::int32_t id : ids) {
    const std::optional<std::string_view> tok = impl_->token_of(id);
    if (!tok) continue;  // HF skips ids without a token
    if (skip_special_tokens && impl_->special(id)) continue;
    if (impl_->decoder == Impl::Decoder::JoinWithSpaces) {
      if (!first) out += ' ';
      out += *tok;
    } else if (!tok::byte_level_to_bytes(*tok, out)) {
      out += *tok;  // characters outside the byte alphabet: the token's own UTF-8
    }
    first = false;
  }
  return out;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special_tokens) const {
  return tok::utf8_lossy(decode_bytes(ids, skip_special_tokens));
}

std::optional<std::int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto it = impl_->added_by_content.find(token); it != impl_->added_by_content.end()) return it->second;
  return impl_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(std::int32_t id) const {
  if (const auto t = impl_->token_of(id)) return std::string(*t);
  return std::nullopt;
}

bool Tokenizer::is_special(std::int32_t id) const { return impl_->special(id); }
std::size_t Tokenizer::vocab_size() const { return impl_->vocab_size; }
const SpecialTokens& Tokenizer::special_tokens() const { return impl_->specials; }
const std::string& Tokenizer::path() const { return impl_->path; }
bool Tokenizer::has_chat_template() const { return !impl_->templates.empty(); }

const std::string& Tokenizer::chat_template_source() const {
  static const std::string none;
  const auto it = impl_->templates.find("default");
  if (it != impl_->templates.end()) return it->second->source();
  return impl_->templates.empty() ? none : impl_->templates.begin()->second->source();
}

std::string Tokenizer::apply_chat_template(const nlohmann::ordered_json& messages, const ChatOptions& options) const {
  if (impl_->templates.empty()) {
    if (!options.tools.is_null() || !options.documents.is_null() || options.continue_final_message)
      throw Error(impl_->path + ": no chat template in tokenizer_config.json, and the built-in ChatML fallback takes "
                  "no tools, documents or continue_final_message");
    if (!messages.is_array()) throw Error("chat messages must be a JSON array of {\"role\", \"content\"} objects");
    return render_chatml(nlohmann::json(messages), options.add_generation_prompt);
  }
  std::string name = options.template_name;
  if (name.empty()) name = !options.tools.is_null() && impl_->templates.count("tool_use") ? "tool_use" : "default";
  const auto it = impl_->templates.find(name);
  if (it == impl_->templates.end()) {
    std::string names;
    for (const auto& [n, t] : impl_->templates) names += (names.empty() ? "" : ", ") + n;
    throw Error(impl_->path + ": no chat template named \"" + name + "\" (it has: " + names + ")");
  }
  return it->second->render(messages, options);
}

std::vector<std::int32_t> Tokenizer::encode_chat(const nlohmann::ordered_json& messages, const ChatOptions& options) const {
  return encode(apply_chat_template(messages, options), false);
}

// ---- streaming

std::string StreamDecoder::push(std::int32_t id) {
  const std::int32_t one[1] = {id};
  if (!tokenizer_.id_to_token(id)) return {};
  if (skip_special_ && tokenizer_.is_special(id)) return {};
  std::string bytes = tokenizer_.decode_bytes(one, skip_special_);
  pending_ += bytes;
  const std::size_t k = tok::complete_utf8_prefix(pending_);
  std::string out = tok::utf8_lossy(std::string_view(pending_).substr(0, k));
  pending_.erase(0, k);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out = tok::utf8_lossy(pending_);
  pending_.clear();
  return out;
}

}  // namespace kvgate

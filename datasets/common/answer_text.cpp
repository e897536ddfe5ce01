#include "datasets/common/answer_text.h"

#include "datasets/common/thinking.h"

namespace kvgate {

namespace {
bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_strip_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view strip(std::string_view s) {
  while (!s.empty() && is_strip_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_strip_space(s.back())) s.remove_suffix(1);
  return s;
}
}  // namespace

std::string final_answer_text(std::string_view response) {
  std::string out(strip(strip_thinking(response)));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = '\n';
  return std::string(strip(out));
}

bool contains_token(std::string_view text, std::string_view value) {
  if (value.empty()) return false;
  for (std::size_t at = text.find(value); at != std::string_view::npos; at = text.find(value, at + 1)) {
    const bool left_ok = at == 0 || !is_alnum(text[at - 1]) || !is_alnum(value.front());
    const std::size_t end = at + value.size();
    const bool right_ok = end == text.size() || !is_alnum(text[end]) || !is_alnum(value.back());
    if (left_ok && right_ok) return true;
  }
  return false;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

void copy_trial_fields(const Trial& trial, std::initializer_list<const char*> meta_keys, nlohmann::json& details) {
  details["bucket"] = trial.bucket;
  for (const char* k : meta_keys)
    if (trial.meta.is_object() && trial.meta.contains(k)) details[k] = trial.meta[k];
}

}  // namespace kvgate

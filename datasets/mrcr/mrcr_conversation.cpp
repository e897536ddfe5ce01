#include "datasets/mrcr/mrcr_conversation.h"

#include <algorithm>
#include <cmath>

#include "harness/core/rng.h"
#include "datasets/mrcr/mrcr_chat.h"
#include "datasets/mrcr/mrcr_text.h"

namespace kvgate::mrcr {

using nlohmann::json;

namespace {

std::string random_prefix(Rng& rng) {
  static const char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 10; ++i) s.push_back(kAlnum[rng.below(62)]);
  return s;
}

int uniform_words(Rng& rng, ReplyLength len, int cap) {
  const int hi = std::max(1, std::min(len.max_words, cap)), lo = std::max(1, std::min(len.min_words, hi));
  return static_cast<int>(rng.range(lo, hi));
}

std::string final_ask_text(const std::string& prefix, int k, const std::string& format, const std::string& topic) {
  return "Prepend " + prefix + " to the " + ordinal(k) + " (1 indexed) " + format + " about " + topic +
         ". Do not include any other text in your response.";
}

// The few-shot example the official prompts open with, made from its own stream: ask A, ask B,
// ask A again, then the follow-up for the 2nd A and its correct answer.
std::string make_preamble(Rng& rng, std::size_t avoid_format, const std::string& avoid_topic) {
  const auto& fs = formats();
  const auto& ts = topics();
  std::string ta, tb;
  do ta = rng.pick(ts); while (ta == avoid_topic);
  do tb = rng.pick(ts); while (tb == avoid_topic || tb == ta);
  std::size_t fa = rng.below(fs.size()), fb = rng.below(fs.size());
  if (fa == avoid_format) fa = (fa + 1) % fs.size();
  const std::string prefix = random_prefix(rng);
  std::string replies[3];
  const std::size_t f[3] = {fa, fb, fa};
  const std::string* t[3] = {&ta, &tb, &ta};
  for (int i = 0; i < 3; ++i) replies[i] = write_reply(f[i], *t[i], static_cast<int>(rng.range(25, 50)), rng);
  std::string s = "Here are some examples of conversations succeeded by a follow-up question answered correctly:\n\n"
                  "======EXAMPLE======\n";
  for (int i = 0; i < 3; ++i) s += "User: " + ask_text(fs[f[i]], *t[i]) + "\nAssistant: " + replies[i] + "\n";
  s += "User: " + final_ask_text(prefix, 2, fs[fa], ta) + "\nAssistant: " + prefix + replies[2] + "\n";
  s += "======END EXAMPLE======\n";
  return s;
}

}  // namespace

Conversation::Conversation(const ConversationOptions& o) : seed_(o.seed), n_(std::max(1, o.needles)) {
  Rng rng(derive_seed(seed_, "plan"));
  const auto& fs = formats();
  needle_format_ = rng.below(fs.size());
  needle_topic_ = rng.pick(topics());
  needle_ask_ = ask_text(fs[needle_format_], needle_topic_);
  k_ = static_cast<int>(rng.range(1, n_));
  prefix_ = random_prefix(rng);
  for (int j = 0; j < n_; ++j) needle_fractions_.push_back(rng.uniform());
  std::sort(needle_fractions_.begin(), needle_fractions_.end());
  // Needle replies take at most ~40% of the target (about 1.6 tokens a word), so small buckets fit.
  const int cap = static_cast<int>(std::max<double>(20.0, 0.4 * static_cast<double>(o.target_tokens) / (n_ * 1.6)));
  for (int j = 0; j < n_; ++j) {
    Rng r(derive_seed(seed_, "needle/" + std::to_string(j)));
    needle_replies_.push_back(write_reply(needle_format_, needle_topic_, uniform_words(r, reply_length(needle_format_), cap), r));
  }
  final_ask_ = final_ask_text(prefix_, k_, fs[needle_format_], needle_topic_);
  Rng pre(derive_seed(seed_, "example"));
  preamble_ = make_preamble(pre, needle_format_, needle_topic_);
}

const std::string& Conversation::format() const { return formats()[needle_format_]; }

const Turn& Conversation::filler(std::size_t i) {
  const auto& fs = formats();
  const auto& ts = topics();
  while (fillers_.size() <= i) {
    Rng r(derive_seed(seed_, "filler/" + std::to_string(fillers_.size())));
    Turn t;
    // Distractors share the needle's format or topic a fifth of the time each, never both.
    const double u = r.uniform();
    do {
      t.format = u < 0.2 ? needle_format_ : r.below(fs.size());
      t.topic = (u >= 0.2 && u < 0.4) ? needle_topic_ : r.pick(ts);
    } while (t.format == needle_format_ && t.topic == needle_topic_);
    t.ask = ask_text(fs[t.format], t.topic);
    t.reply = write_reply(t.format, t.topic, uniform_words(r, reply_length(t.format), 1 << 20), r);
    fillers_.push_back(std::move(t));
    cuts_.push_back(std::string::npos);
  }
  return fillers_[i];
}

void Conversation::set_filler_count(std::size_t n) {
  if (n > 0) filler(n - 1);
  filler_count_ = n;
}

void Conversation::cut_reply(std::size_t i, std::size_t bytes) {
  filler(i);
  cuts_[i] = bytes >= fillers_[i].reply.size() ? std::string::npos : bytes;
}

std::size_t Conversation::reply_cut(std::size_t i) const { return i < cuts_.size() ? cuts_[i] : std::string::npos; }

std::size_t Conversation::cut_replies() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < filler_count_; ++i) n += cuts_[i] != std::string::npos;
  return n;
}

json Conversation::raw_messages(std::vector<std::size_t>* needle_ask_indices) const {
  json m = json::array();
  m.push_back({{"role", "user"}, {"content", preamble_}});
  const std::size_t n = filler_count_;
  std::size_t next_needle = 0;
  for (std::size_t p = 0; p <= n; ++p) {
    // Needle j goes before filler floor(fraction_j * (N + 1)), clamped to N (after the last).
    while (next_needle < needle_fractions_.size() &&
           std::min<std::size_t>(n, static_cast<std::size_t>(std::floor(needle_fractions_[next_needle] * double(n + 1)))) == p) {
      if (needle_ask_indices) needle_ask_indices->push_back(m.size());
      m.push_back({{"role", "user"}, {"content", needle_ask_}});
      m.push_back({{"role", "assistant"}, {"content", needle_replies_[next_needle]}});
      ++next_needle;
    }
    if (p == n) break;
    const Turn& t = fillers_[p];
    m.push_back({{"role", "user"}, {"content", t.ask}});
    m.push_back({{"role", "assistant"}, {"content", cuts_[p] == std::string::npos ? t.reply : t.reply.substr(0, cuts_[p])}});
  }
  m.push_back({{"role", "user"}, {"content", final_ask_}});
  return m;
}

json Conversation::messages(bool merge) const {
  json m = raw_messages(nullptr);
  return merge ? merge_consecutive_user_turns(m) : m;
}

std::int64_t Conversation::desired_msg_index(bool merge) const {
  std::vector<std::size_t> idx;
  const json m = raw_messages(&idx);
  const std::size_t raw = idx.at(static_cast<std::size_t>(k_ - 1));
  return merge ? merged_message_index(m, static_cast<std::int64_t>(raw)) : static_cast<std::int64_t>(raw);
}

}  // namespace kvgate::mrcr

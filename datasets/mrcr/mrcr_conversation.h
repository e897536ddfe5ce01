// One generated MRCR conversation, MRCR-shaped like the official rows: a user turn with a
// few-shot example, then "write a {format} about {topic}" asks with assistant replies, among them
// n identical needle asks with different replies, then the final ask for the k-th of them with a
// random 10-character prefix. Filler turns are made on demand from their own seeded streams, so
// the fitter can add or drop whole turns and cut a filler reply without changing anything else.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::mrcr {

struct Turn {
  std::size_t format = 0;  // index into formats()
  std::string topic;
  std::string ask, reply;
};

struct ConversationOptions {
  std::uint64_t seed = 0;            // the trial's own seed
  int needles = 2;                   // identical asks (2, 4, 8, ...)
  std::int64_t target_tokens = 0;    // sizes the needle replies (they take at most ~40%)
};

class Conversation {
 public:
  explicit Conversation(const ConversationOptions& options);

  // Filler turns in the conversation (0..N); needles sit at fixed fractions of them.
  std::size_t filler_count() const { return filler_count_; }
  void set_filler_count(std::size_t n);
  const Turn& filler(std::size_t i);  // made on first use
  // Cuts filler i's reply to its first `bytes` bytes (std::string::npos: whole).
  void cut_reply(std::size_t i, std::size_t bytes);
  std::size_t reply_cut(std::size_t i) const;
  std::size_t cut_replies() const;

  // The input messages; with merge, consecutive user turns are joined with "\n".
  nlohmann::json messages(bool merge) const;
  // Index in messages(merge) of the requested needle's ask.
  std::int64_t desired_msg_index(bool merge) const;

  const std::string& prefix() const { return prefix_; }
  std::string answer() const { return prefix_ + needle_replies_.at(static_cast<std::size_t>(k_ - 1)); }
  int needles() const { return n_; }
  int k() const { return k_; }  // 1-based
  const std::string& format() const;
  const std::string& topic() const { return needle_topic_; }

 private:
  nlohmann::json raw_messages(std::vector<std::size_t>* needle_ask_indices) const;

  std::uint64_t seed_;
  int n_ = 0, k_ = 0;
  std::size_t needle_format_ = 0;
  std::string needle_topic_, needle_ask_, prefix_, preamble_, final_ask_;
  std::vector<std::string> needle_replies_;
  std::vector<double> needle_fractions_;  // sorted, in [0, 1)
  std::vector<Turn> fillers_;             // made so far
  std::vector<std::size_t> cuts_;         // per made filler; npos = whole
  std::size_t filler_count_ = 0;
};

}  // namespace kvgate::mrcr

#include "datasets/mrcr/mrcr_fit.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/error.h"

namespace kvgate::mrcr {

namespace {

class Fitter {
 public:
  Fitter(Conversation& c, const TokenCounter& counter, const FitOptions& o) : c_(c), tc_(counter), o_(o) {}

  FitResult run() {
    const std::int64_t target = o_.target_tokens;
    set_fillers(0);
    const std::int64_t base = full();
    if (base > target)
      throw Error("mrcr: a " + std::to_string(target) + "-token bucket cannot hold " + std::to_string(c_.needles()) +
                  " needles: they and the example alone take " + std::to_string(base) +
                  " tokens; use larger --lengths or fewer --needles");
    if (base == target) return result(base);
    base_ = base;
    // Per-turn overhead (role markers, separators): one filler turn's exact cost minus its contents.
    set_fillers(1);
    const Turn& first = c_.filler(0);
    overhead_ = std::max<std::int64_t>(0, full() - base - text(first.ask) - text(first.reply));
    if (const std::optional<std::int64_t> got = predicted_fit(target)) return result(*got);
    // Exact counts throughout.
    for (std::size_t i = 0; i < c_.filler_count(); ++i) set_cut(i, std::string::npos);
    const std::int64_t n = grow_to(target);
    set_fillers(n);
    return result(trim(target, count_at_hi_));
  }

 private:
  std::int64_t full() {
    ++counts_;
    return static_cast<std::int64_t>(tc_.count_chat(c_.messages(o_.merge_user_turns)));
  }
  void set_fillers(std::int64_t n) { c_.set_filler_count(static_cast<std::size_t>(n)); }
  void set_cut(std::size_t i, std::size_t bytes) { c_.cut_reply(i, bytes); }

  // Fast path: when counts add up over messages (chat templates that put special tokens between
  // them, as ChatML does), the estimates are exact: choose the turns and the cut from the
  // per-message counts alone, and let one count of the whole input verify them. Returns nothing
  // (cuts undone) when the verification fails.
  std::optional<std::int64_t> predicted_fit(std::int64_t target) {
    std::int64_t n = 1;
    while (estimate(n) < target) ++n;
    set_fillers(n);
    std::int64_t predicted = estimate(n);
    for (std::size_t i = static_cast<std::size_t>(n); predicted != target && i-- > 0;) {
      const std::string& reply = c_.filler(i).reply;
      const std::vector<std::size_t> ends = word_ends(reply);
      if (ends.empty()) continue;
      const std::int64_t whole = text(reply);
      const std::size_t cut = find_cut(reply, ends, whole - (predicted - target));
      const std::int64_t after = predicted - whole + text(reply.substr(0, cut));
      if (after < target) continue;  // this reply cannot land exactly: leave it whole
      set_cut(i, cut);
      predicted = after;
    }
    if (predicted == target) {
      const std::int64_t got = full();
      if (got == target) return got;
    }
    for (std::size_t i = 0; i < c_.filler_count(); ++i) set_cut(i, std::string::npos);
    return std::nullopt;
  }

  std::int64_t text(const std::string& s) const { return static_cast<std::int64_t>(tc_.count_text(s)); }

  // Estimated count with n fillers: base + per-turn costs (+ a per-turn overhead learned from
  // the first exact count); a correction from the latest exact count absorbs the rest.
  std::int64_t estimate(std::int64_t n) {
    while (static_cast<std::int64_t>(cum_.size()) <= n) {
      const std::size_t i = cum_.size() - 1;
      const Turn& t = c_.filler(i);
      cum_.push_back(cum_.back() + text(t.ask) + text(t.reply) + overhead_);
    }
    return base_ + cum_[static_cast<std::size_t>(n)];
  }

  // A filler count whose exact count reaches the target while, by the corrected estimate, one
  // turn fewer would not: estimate-guided probes (usually two exact counts), bisection if the
  // estimates keep misleading. lo (count < target) and hi (count >= target) are exact.
  std::int64_t grow_to(std::int64_t target) {
    std::int64_t lo = 0, hi = -1, corr = 0;
    for (int probe = 0;; ++probe) {
      std::int64_t n;
      if (hi >= 0 && probe >= 6) {
        n = lo + (hi - lo) / 2;
      } else {
        n = (hi < 0 && probe >= 6) ? 2 * lo : lo + 1;  // gallop if the estimates keep falling short
        while (estimate(n) + corr < target && (hi < 0 || n < hi - 1)) ++n;
        if (hi >= 0 && n >= hi) n = hi - 1;
      }
      set_fillers(n);
      const std::int64_t cn = full();
      corr = cn - estimate(n);
      if (cn >= target) {
        hi = n, count_at_hi_ = cn;
        if (n - 1 <= lo || estimate(n - 1) + corr < target) return hi;
      } else {
        lo = n;
      }
      if (hi >= 0 && hi - lo <= 1) return hi;
    }
  }

  // Ends of words in s (byte offsets just past each word).
  static std::vector<std::size_t> word_ends(const std::string& s) {
    std::vector<std::size_t> ends;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const bool space = s[i] == ' ' || s[i] == '\n' || s[i] == '\t';
      const bool next_space = i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\n' || s[i + 1] == '\t';
      if (!space && next_space) ends.push_back(i + 1);
    }
    return ends;
  }
  static bool char_boundary(const std::string& s, std::size_t i) {
    return i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  }

  // The longest cut of `reply` (at least one word) whose own count is <= want, preferring a
  // word end; inside the next word when that lands exactly on want.
  std::size_t find_cut(const std::string& reply, const std::vector<std::size_t>& ends, std::int64_t want) const {
    std::size_t lo = 0, hi = ends.size() - 1;  // index into ends; ends[0] is always allowed
    if (text(reply.substr(0, ends[0])) > want) return ends[0];
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (text(reply.substr(0, ends[mid])) <= want) lo = mid;
      else hi = mid - 1;
    }
    if (text(reply.substr(0, ends[lo])) == want || lo + 1 == ends.size()) return ends[lo];
    for (std::size_t b = ends[lo] + 1; b < ends[lo + 1]; ++b)
      if (char_boundary(reply, b) && text(reply.substr(0, b)) == want) return b;
    return ends[lo];
  }

  // Cuts filler replies, most recent first, until count_chat == target. `count` is the current
  // exact count (>= target). Each candidate: predict the cut from the reply's own count (exact
  // when counts add up across messages), verify, correct a few times, then bisect on exact counts.
  std::int64_t trim(std::int64_t target, std::int64_t count) {
    for (std::size_t n = c_.filler_count(); count != target && n-- > 0;) {
      const std::string reply = c_.filler(n).reply;
      const std::vector<std::size_t> ends = word_ends(reply);
      if (ends.empty()) continue;
      const std::int64_t before = count;
      std::int64_t want = text(reply) - (count - target);
      std::size_t cut = std::string::npos;
      for (int attempt = 0; attempt < 4 && count != target; ++attempt) {
        const std::size_t next = find_cut(reply, ends, want);
        if (next == cut) break;
        cut = next;
        set_cut(n, cut);
        count = full();
        if (cut == ends[0] && count > target) break;  // this reply cannot give enough: take the next one too
        want += target - count;
      }
      if (count == target) break;
      if (count > target && cut == ends[0]) continue;
      count = bisect(n, reply, target, ends[0]);
      if (count > target) continue;  // cannot happen unless counts are wildly non-monotonic
      if (count != target) {  // this reply cannot land exactly: restore it, try the next one
        set_cut(n, std::string::npos);
        count = before;
      }
    }
    if (count != target && count > target) count = last_resort(target);
    return count;
  }

  // Bisects the cut of filler n's reply on exact counts for the longest cut with count <= target.
  std::int64_t bisect(std::size_t n, const std::string& reply, std::int64_t target, std::size_t min_cut) {
    std::size_t lo = min_cut, hi = reply.size();  // the whole reply is over the target
    set_cut(n, lo);
    std::int64_t at_lo = full();
    if (at_lo > target) return at_lo;
    while (hi - lo > 1) {
      std::size_t mid = lo + (hi - lo) / 2;
      while (mid > lo && !char_boundary(reply, mid)) --mid;
      if (mid == lo) break;
      set_cut(n, mid);
      const std::int64_t cm = full();
      if (cm <= target) lo = mid, at_lo = cm;
      else hi = mid;
      if (cm == target) break;
    }
    set_cut(n, lo);
    return at_lo;
  }

  // Every reply tried and the count still over the target (the last turn's ask alone overflows):
  // undo the cuts and drop whole turns until the count is at or under the target. Reported as
  // not exact; it needs a target within a few tokens of the needles-only size.
  std::int64_t last_resort(std::int64_t target) {
    for (std::size_t n = 0; n < c_.filler_count(); ++n) set_cut(n, std::string::npos);
    std::int64_t count = full();
    while (count > target && c_.filler_count() > 0) {
      set_fillers(static_cast<std::int64_t>(c_.filler_count()) - 1);
      count = full();
    }
    return count;
  }

  FitResult result(std::int64_t tokens) const {
    FitResult r;
    r.tokens = tokens;
    r.exact = tokens == o_.target_tokens;
    r.fillers = c_.filler_count();
    r.cut_replies = c_.cut_replies();
    r.full_counts = counts_;
    return r;
  }

  Conversation& c_;
  const TokenCounter& tc_;
  const FitOptions& o_;
  std::int64_t base_ = 0, overhead_ = 0, count_at_hi_ = 0;
  std::vector<std::int64_t> cum_{0};
  int counts_ = 0;
};

}  // namespace

FitResult fit_to_length(Conversation& conversation, const TokenCounter& counter, const FitOptions& options) {
  return Fitter(conversation, counter, options).run();
}

}  // namespace kvgate::mrcr

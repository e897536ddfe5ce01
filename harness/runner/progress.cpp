#include "harness/runner/progress.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "harness/core/error.h"
#include "harness/core/log.h"

namespace kvgate::runner {

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
}  // namespace

ProgressMode parse_progress_mode(const std::string& s, bool tty) {
  if (s == "auto") return tty ? ProgressMode::bar : ProgressMode::lines;
  if (s == "bar") return ProgressMode::bar;
  if (s == "lines") return ProgressMode::lines;
  if (s == "none") return ProgressMode::none;
  throw Error("--progress " + s + ": must be auto, bar, lines or none");
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

std::string progress_text(std::size_t done, std::size_t total, double rate, std::size_t errors, std::size_t retries,
                          std::size_t in_flight) {
  const double pct = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  std::string s = std::to_string(done) + "/" + std::to_string(total) + " " + fixed(pct, 1) + "%";
  s += " | " + fixed(rate, rate < 10 ? 2 : 1) + "/s";
  if (done < total) s += " | ETA " + (rate > 0 ? format_duration(static_cast<double>(total - done) / rate) : std::string("?"));
  s += " | errors " + std::to_string(errors);
  if (done) s += " (" + fixed(100.0 * static_cast<double>(errors) / static_cast<double>(done), 2) + "%)";
  s += " | retries " + std::to_string(retries);
  if (in_flight) s += " | in flight " + std::to_string(in_flight);
  return s;
}

ProgressReporter::ProgressReporter(const ProgressOptions& options, const RunCounters& counters) : o_(options), c_(counters) {
  started_ = window_t_ = now_s();
  if (o_.mode != ProgressMode::none) thread_ = std::thread([this] { loop(); });
}

ProgressReporter::~ProgressReporter() { stop(); }

void ProgressReporter::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (o_.mode != ProgressMode::none) draw(true);
}

void ProgressReporter::loop() {
  const auto period = std::chrono::duration<double>(o_.mode == ProgressMode::bar ? 0.2 : std::max(0.05, o_.interval_s));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, period);
    if (stop_) break;
    lock.unlock();
    draw(false);
    lock.lock();
  }
}

void ProgressReporter::draw(bool final) {
  const double t = now_s();
  const std::size_t session_done = c_.done.load();
  // Rate over the last ~10 s (responsive), the whole session until then.
  if (t - window_t_ >= 10.0) {
    rate_ = static_cast<double>(session_done - window_done_) / (t - window_t_);
    window_t_ = t;
    window_done_ = session_done;
  }
  const double elapsed = std::max(1e-9, t - started_);
  const double rate = rate_ > 0 && !final ? rate_ : static_cast<double>(session_done) / elapsed;
  const std::string text = progress_text(o_.done_before + session_done, o_.total, rate, c_.errors.load(), c_.retries.load(),
                                         final ? 0 : c_.in_flight.load());
  if (o_.mode == ProgressMode::bar) {
    const std::size_t done = o_.done_before + session_done;
    const int width = 24;
    const int filled = o_.total ? static_cast<int>(static_cast<double>(width) * static_cast<double>(done) / static_cast<double>(o_.total)) : width;
    std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.') + "] ";
    std::cerr << "\r" << bar << text << "\x1b[K" << (final ? "\n" : "") << std::flush;
  } else {
    log_info("progress " + text + (final ? " (" + format_duration(elapsed) + ")" : ""));
  }
}

}  // namespace kvgate::runner

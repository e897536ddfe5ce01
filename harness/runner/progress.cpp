#include "harness/runner/progress.h"

#include <algorithm>
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

ProgressLines::ProgressLines(double start_s, std::size_t total, std::size_t done_before, double min_interval_s,
                             double max_interval_s, double every_percent)
    : start_(start_s), last_(start_s), min_(min_interval_s), max_(std::max(min_interval_s, max_interval_s)),
      every_(every_percent), total_(total), before_(done_before) {}

double ProgressLines::rate(double now_s, std::size_t session_done) const {
  const double elapsed = now_s - start_;
  return elapsed > 0 ? static_cast<double>(session_done) / elapsed : 0.0;
}

std::string ProgressLines::poll(double now_s, std::size_t session_done, std::size_t errors, std::size_t retries,
                                std::size_t in_flight) {
  const double since = now_s - last_;
  if (since < min_) return "";
  const double step = total_ ? 100.0 * static_cast<double>(session_done - done_at_last_) / static_cast<double>(total_) : 0.0;
  if (since < max_ && step < every_) return "";
  last_ = now_s;
  done_at_last_ = session_done;
  return progress_text(before_ + session_done, total_, rate(now_s, session_done), errors, retries, in_flight);
}

std::string ProgressLines::final_line(double now_s, std::size_t session_done, std::size_t errors, std::size_t retries) const {
  return "done " + progress_text(before_ + session_done, total_, rate(now_s, session_done), errors, retries, 0) + " | elapsed " +
         format_duration(now_s - start_);
}

ProgressReporter::ProgressReporter(const ProgressOptions& options, const RunCounters& counters)
    : o_(options), c_(counters), started_(now_s()),
      lines_(started_, options.total, options.done_before, options.interval_s, std::max(30.0, options.interval_s)) {
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
  // Lines: wake each second and let ProgressLines decide; the bar redraws five times a second.
  const auto period = std::chrono::duration<double>(o_.mode == ProgressMode::bar ? 0.2 : std::min(1.0, o_.interval_s));
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
  if (o_.mode == ProgressMode::lines) {
    const std::string line = final ? lines_.final_line(t, session_done, c_.errors.load(), c_.retries.load())
                                   : lines_.poll(t, session_done, c_.errors.load(), c_.retries.load(), c_.in_flight.load());
    if (!line.empty()) log_info("progress " + line);
    return;
  }
  const std::string text = progress_text(o_.done_before + session_done, o_.total, lines_.rate(t, session_done), c_.errors.load(),
                                         c_.retries.load(), final ? 0 : c_.in_flight.load()) +
                           (final ? " | elapsed " + format_duration(t - started_) : "");
  const std::size_t done = o_.done_before + session_done;
  const int width = 24;
  const int filled = o_.total ? static_cast<int>(static_cast<double>(width) * static_cast<double>(done) / static_cast<double>(o_.total)) : width;
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.') + "] ";
  std::cerr << "\r" << bar << text << "\x1b[K" << (final ? "\n" : "") << std::flush;
}

}  // namespace kvgate::runner

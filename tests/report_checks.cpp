#include "tests/report_checks.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/version.h"

extern char** environ;

namespace kvtest {

CommandResult run_program(const std::vector<std::string>& args, int timeout_s) {
  TempDir io;
  const std::string out_path = io.file("out"), err_path = io.file("err");
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: a timeout stops its children too
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  CommandResult r;
  if (rc != 0) {
    r.exit_code = 127;
    r.err = std::string("cannot start ") + args[0] + ": not found in PATH";
    return r;
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.exit_code = timed_out ? 124 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

nlohmann::json report_facts(const std::string& kind, const std::string& path) {
  const CommandResult r = run_program({"python3", "tests/tools/report_check.py", kind, path});
  if (r.exit_code != 0) throw std::runtime_error("report_check.py " + kind + " " + path + " failed (exit " + std::to_string(r.exit_code) + "): " + r.err);
  return nlohmann::json::parse(r.out);
}

nlohmann::json facts_of(const std::string& text, const char* ext) {
  TempDir tmp;
  const std::string path = tmp.file(std::string("r.") + ext);
  write_text(path, text);
  return report_facts("xml", path);
}

nlohmann::json check_page(const std::string& html) {
  nlohmann::json f;
  REQUIRE_NOTHROW(f = facts_of(html));
  CHECK(f["root"] == "html");
  CHECK(f["active_elements"].empty());
  CHECK(f["url_attributes"].empty());
  CHECK(f["event_handlers"].empty());
  CHECK(f["style_urls"] == 0);
  CHECK(f["raw_http"] == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // The browser is told to refuse anything but inline styles and data: images (report-browser-test shows it does).
  CHECK(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src data:;") <
        html.find("<style>"));
  for (const nlohmann::json& svg : f["svgs"]) {
    INFO("svg " << svg.dump());
    CHECK(!svg["title"].get<std::string>().empty());
    CHECK(svg["aria_label"] == svg["title"]);
    for (const char* axis : {"x", "y"}) {
      REQUIRE(svg["axes"].contains(axis));
      CHECK(svg["axes"][axis]["lines"].get<int>() >= 1);
      CHECK(!svg["axes"][axis]["ticks"].empty());
      REQUIRE(svg["axes"][axis]["titles"].size() == 1);
      CHECK(!svg["axes"][axis]["titles"][0].get<std::string>().empty());
    }
  }
  return f;
}

namespace {

bool is_block(const std::string& tag) {
  static const char* const blocks[] = {"p", "div", "li", "tr", "h1", "h2", "h3", "h4", "figcaption", "pre", "section", "header",
                                       "footer", "table", "ul", "summary", "details", "svg", "title", "nav", "figure", "thead", "tbody"};
  for (const char* b : blocks)
    if (tag == b) return true;
  return false;
}

std::string decode_entities(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const std::size_t semi = s.find(';', i);
    const std::string e = s.substr(i, semi - i + 1);
    if (e == "&amp;") out += '&';
    else if (e == "&lt;") out += '<';
    else if (e == "&gt;") out += '>';
    else if (e == "&quot;") out += '"';
    else if (e == "&#39;") out += '\'';
    else if (e == "&#58;") out += ':';
    else out += e;
    i = semi;
  }
  return out;
}

}  // namespace

std::string visible_text(const std::string& html) {
  std::string text;
  std::size_t i = 0;
  while (i < html.size()) {
    if (html[i] != '<') {
      const std::size_t next = html.find('<', i);
      text += decode_entities(html.substr(i, next - i));
      i = next == std::string::npos ? html.size() : next;
      continue;
    }
    const std::size_t end = html.find('>', i);
    std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    const bool closing = !tag.empty() && tag[0] == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" /"));
    if (!closing && name == "style") {
      i = html.find("</style>", i);
      continue;
    }
    if (name == "td" || name == "th") text += closing ? " | " : "";
    else if (name == "text" || name == "br" || name == "a") text += ' ';
    else if (is_block(name)) text += '\n';
  }
  // Collapse spaces, trim lines, drop empty ones.
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    std::string collapsed;
    for (char ch : line) {
      if (ch == ' ' || ch == '\t') {
        if (!collapsed.empty() && collapsed.back() != ' ') collapsed += ' ';
      } else {
        collapsed += ch;
      }
    }
    while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
    if (!collapsed.empty()) out += collapsed + "\n";
  }
  return out;
}

std::string normalize_build(std::string text) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{kvgate::git_commit(), "COMMIT"}, {kvgate::version(), "VERSION"}}) {
    if (from.empty()) continue;
    for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size())) text.replace(p, from.size(), to);
  }
  return text;
}

std::string golden_mismatch(const std::string& name, const std::string& actual) {
  const std::string path = "tests/golden/" + name;
  const char* update = std::getenv("KVGATE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_text(path, actual);
    return "";
  }
  if (!std::filesystem::exists(path)) return path + " is missing: run the test with KVGATE_UPDATE_GOLDEN=1 to create it, then review it";
  const std::string expected = read_text(path);
  if (expected == actual) return "";
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb)
      return path + ":" + std::to_string(line) + " differs\n  expected: " + (ga ? la : "(end of file)") + "\n  actual:   " +
             (gb ? lb : "(end of file)") + "\n(KVGATE_UPDATE_GOLDEN=1 rewrites the golden files after an intended change)";
  }
  return path + " differs (line endings?)";
}

}  // namespace kvtest

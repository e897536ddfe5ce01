// The kvgate command line: each subcommand lives in its own cmd_<verb>.cpp, a thin layer over the
// libraries, and registers itself with `register_<verb>`. A handler returns the exit code.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kvgate::cli {

using Handler = std::function<int()>;

class Commands {
 public:
  void add(CLI::App* app, Handler handler) { handlers_[app] = std::move(handler); }
  // The handler of the deepest subcommand that was parsed, or nullptr.
  const Handler* find_parsed(const CLI::App& root) const;

 private:
  std::map<const CLI::App*, Handler> handlers_;
};

// For subcommands of the contract whose issue has not landed: says so and exits 2.
int not_built(const std::string& command, int issue);

// "4096,8192,128k" -> {4096, 8192, 131072}; k/K = 1024, m/M = 1024^2. Error names the flag.
std::vector<std::int64_t> parse_lengths(const std::string& text, const std::string& flag);

// Registration, one per cmd_<verb>.cpp.
void register_gen(CLI::App& app, Commands& commands);
void register_run(CLI::App& app, Commands& commands);
void register_compare(CLI::App& app, Commands& commands);
void register_report(CLI::App& app, Commands& commands);
void register_gate(CLI::App& app, Commands& commands);
void register_make_model(CLI::App& app, Commands& commands);
void register_merge(CLI::App& app, Commands& commands);
void register_history(CLI::App& app, Commands& commands);
void register_grade(CLI::App& app, Commands& commands);
void register_stats(CLI::App& app, Commands& commands);
void register_tokenize(CLI::App& app, Commands& commands);
void register_serve(CLI::App& app, Commands& commands);
void register_capacity(CLI::App& app, Commands& commands);
void register_calibrate(CLI::App& app, Commands& commands);
void register_kld(CLI::App& app, Commands& commands);
void register_validate(CLI::App& app, Commands& commands);

}  // namespace kvgate::cli

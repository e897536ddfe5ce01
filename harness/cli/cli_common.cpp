#include "harness/cli/cli_common.h"

#include <iostream>

#include "harness/core/error.h"

namespace kvgate::cli {

const Handler* Commands::find_parsed(const CLI::App& root) const {
  const CLI::App* node = &root;
  const Handler* found = nullptr;
  for (;;) {
    auto it = handlers_.find(node);
    if (it != handlers_.end()) found = &it->second;
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : node->get_subcommands())
      if (sub->parsed()) next = sub;
    if (!next) return found;
    node = next;
  }
}

int not_built(const std::string& command, int issue) {
  std::cerr << "kvgate " << command << ": not built yet (issue #" << issue
            << "); this version of kvgate accepts the command line but cannot run it\n";
  return 2;
}

std::vector<std::int64_t> parse_lengths(const std::string& text, const std::string& flag) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::int64_t mult = 1;
    if (!item.empty() && (item.back() == 'k' || item.back() == 'K')) mult = 1024, item.pop_back();
    else if (!item.empty() && (item.back() == 'm' || item.back() == 'M')) mult = 1024 * 1024, item.pop_back();
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v <= 0)
      throw Error(flag + " " + text + ": \"" + item + "\" is not a positive token count (e.g. 4096,8192,32k)");
    out.push_back(v * mult);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace kvgate::cli

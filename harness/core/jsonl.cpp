#include "harness/core/jsonl.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness/core/error.h"

namespace kvgate {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + "): check the path");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read failed (" + std::strerror(errno) + ")");
  return std::move(ss).str();
}

static bool is_blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

static std::string parse_error_text(const json::parse_error& e) {
  // nlohmann's message starts with "[json.exception.parse_error.101] "; keep what follows.
  std::string what = e.what();
  auto pos = what.find("] ");
  return pos == std::string::npos ? what : what.substr(pos + 2);
}

JsonlReadStats for_each_jsonl(const std::string& path, const std::function<void(json&&, std::size_t)>& fn,
                              const JsonlReadOptions& options) {
  const std::string data = read_file(path);
  JsonlReadStats stats;
  std::size_t pos = 0, line_no = 0;
  while (pos < data.size()) {
    std::size_t nl = data.find('\n', pos);
    const bool terminated = nl != std::string::npos;
    const std::size_t end = terminated ? nl : data.size();
    std::string_view line(data.data() + pos, end - pos);
    ++line_no;
    ++stats.lines;
    if (!is_blank(line)) {
      json value;
      try {
        value = json::parse(line);
      } catch (const json::parse_error& e) {
        if (!terminated && options.allow_torn_tail) {
          stats.torn_tail_bytes = line.size();
          break;
        }
        throw Error(path + ":" + std::to_string(line_no) + ": not valid JSON (" + parse_error_text(e) +
                    (terminated ? ")" : "); the last line is cut short, was the file written completely?"));
      }
      ++stats.records;
      fn(std::move(value), line_no);
    }
    pos = terminated ? nl + 1 : data.size();
    stats.valid_bytes = pos;
  }
  return stats;
}

std::vector<json> read_jsonl(const std::string& path, const JsonlReadOptions& options) {
  std::vector<json> out;
  for_each_jsonl(path, [&](json&& v, std::size_t) { out.push_back(std::move(v)); }, options);
  return out;
}

std::string to_jsonl_line(const json& value) {
  std::string line = value.dump(-1, ' ', false, json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

}  // namespace kvgate

#include "harness/core/results_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include "harness/core/log.h"

#include "harness/core/error.h"
#include "harness/core/jsonl.h"

namespace kvgate {

using nlohmann::json;

static void write_all(int fd, const std::string& data, const std::string& path) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": write failed (" + std::strerror(errno) + ")");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::size_t repair_jsonl_tail(const std::string& path) {
  if (!std::filesystem::exists(path)) return 0;
  const std::string data = read_file(path);
  if (data.empty() || data.back() == '\n') return 0;
  const std::size_t start = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
  const std::string_view tail(data.data() + start, data.size() - start);
  bool complete = false;
  try {
    complete = json::parse(tail).is_object();
  } catch (const json::parse_error&) {
  }
  if (complete) {  // cut between the value and its newline: keep it
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot open for appending (" + std::strerror(errno) + ")");
    write_all(fd, "\n", path);
    ::close(fd);
    return 0;
  }
  if (::truncate(path.c_str(), static_cast<off_t>(start)) != 0)
    throw Error(path + ": cannot discard the torn last line (" + std::strerror(errno) + ")");
  return tail.size();
}

ResultsWriter::ResultsWriter(const std::string& path, bool fsync_each) : path_(path), fsync_each_(fsync_each) {
  discarded_bytes_ = repair_jsonl_tail(path);
  if (discarded_bytes_ > 0)
    log_warn(path + ": discarded a torn last line (" + std::to_string(discarded_bytes_) +
             " bytes) left by an interrupted run; that trial will run again");
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path + ": cannot open for appending (" + std::strerror(errno) + "): check the directory");
}

ResultsWriter::~ResultsWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsWriter::append(const ResultRecord& record) { append_json(to_json(record)); }

void ResultsWriter::append_json(const json& line) {
  const std::string text = to_jsonl_line(line);
  std::lock_guard<std::mutex> lock(mu_);
  write_all(fd_, text, path_);
  if (fsync_each_ && ::fdatasync(fd_) != 0) throw Error(path_ + ": fsync failed (" + std::strerror(errno) + ")");
}

}  // namespace kvgate

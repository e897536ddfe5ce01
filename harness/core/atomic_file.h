// Whole-file writes that never leave a half-written file: write a temporary beside the target,
// fsync it, then rename over the target.
#pragma once
#include <string>
#include <string_view>

namespace kvgate {

void write_file_atomic(const std::string& path, std::string_view content);

// Creates a directory and its parents; an Error names the path when it cannot.
void make_directories(const std::string& path);

}  // namespace kvgate

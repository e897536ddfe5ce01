#pragma once
#include <string>
#include <string_view>

namespace kvgate {
std::string sha256_hex(std::string_view data);       // lower-case hex
std::string sha256_file(const std::string& path);    // Error naming the path if unreadable
}  // namespace kvgate

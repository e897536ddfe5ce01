// Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04, the GPU machine) behind one header.
#pragma once
#include <string>

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define KVGATE_CATCH3 1
#else
#include <catch2/catch.hpp>
#define KVGATE_CATCH3 0
#endif

namespace kvtest {
#if KVGATE_CATCH3
using Catch::Approx;
inline auto contains(const std::string& s) { return Catch::Matchers::ContainsSubstring(s); }
#else
using Catch::Detail::Approx;
inline auto contains(const std::string& s) { return Catch::Matchers::Contains(s); }
#endif
}  // namespace kvtest

# Every dependency is a Debian package installed by scripts/setup (README: "Dependencies").
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)          # sha256 of tasks files, TLS for libcurl and httplib
find_package(Boost 1.74 REQUIRED)       # Boost.Math is header-only
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
find_package(yaml-cpp REQUIRED)
# Debian builds cpp-httplib as a compiled library (with OpenSSL, zlib, brotli): link it through pkg-config.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_library(kvgate_httplib INTERFACE)
target_link_libraries(kvgate_httplib INTERFACE PkgConfig::HTTPLIB Threads::Threads)
if(KVGATE_BUILD_TESTS)
  find_package(Catch2 REQUIRED)         # v2 on Debian 12, v3 on Ubuntu 24.04: tests/catch.hpp bridges them
endif()
if(KVGATE_BUILD_BENCHMARKS)
  find_package(benchmark QUIET)
endif()

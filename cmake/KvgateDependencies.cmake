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
# Debian builds cpp-httplib as a compiled library with OpenSSL (and zlib/brotli, used only inside it,
# so their headers are not needed here: its .pc file would demand brotli's dev package).
find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
find_library(HTTPLIB_LIBRARY cpp-httplib REQUIRED)
add_library(kvgate_httplib INTERFACE)
target_include_directories(kvgate_httplib SYSTEM INTERFACE ${HTTPLIB_INCLUDE_DIR})
target_compile_definitions(kvgate_httplib INTERFACE CPPHTTPLIB_OPENSSL_SUPPORT)
target_link_libraries(kvgate_httplib INTERFACE ${HTTPLIB_LIBRARY} OpenSSL::SSL OpenSSL::Crypto Threads::Threads)
if(KVGATE_BUILD_TESTS)
  find_package(Catch2 REQUIRED)         # v2 on Debian 12, v3 on Ubuntu 24.04: tests/catch.hpp bridges them
endif()
if(KVGATE_BUILD_BENCHMARKS)
  find_package(benchmark QUIET)
endif()

// Python str methods on UTF-8 strings, by code point, as templates call them (strip, split,
// replace, upper, title, ...).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::jinja {

std::string py_strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// sep == nullopt: runs of whitespace. maxsplit < 0: no limit. Throws kvgate::Error on an empty sep.
std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep, long maxsplit);
std::vector<std::string> py_rsplit(std::string_view s, const std::optional<std::string>& sep, long maxsplit);
std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, long count);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_capitalize(std::string_view s);
std::string py_title(std::string_view s);
std::vector<std::string> py_splitlines(std::string_view s, bool keepends);
std::size_t py_len(std::string_view s);  // code points
bool py_is(std::string_view s, const char* what);  // isdigit, isalpha, isalnum, isspace, islower, isupper

}  // namespace kvgate::jinja

// Helpers of the report tests: run a program (python3, chromium) with a time limit, the facts
// tests/tools/report_check.py reads from an XML/HTML file or a PNG, the visible text of an HTML
// report (for golden files), and golden-file comparison (KVGATE_UPDATE_GOLDEN=1 rewrites them).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace kvtest {

// Runs argv[0] (searched in PATH) with a wall-clock limit; exit_code 124 when it ran past it.
CommandResult run_program(const std::vector<std::string>& argv, int timeout_s = 60);

// `report_check.py xml|png FILE`: the facts as JSON; throws std::runtime_error with the checker's
// message when the file does not parse (not well-formed XML, not a PNG).
nlohmann::json report_facts(const std::string& kind, const std::string& path);

// Writes `text` to a temporary file (extension `ext`) and returns report_check.py's XML facts.
nlohmann::json facts_of(const std::string& text, const char* ext = "html");

// Catch2 checks every HTML report must pass: parses as XML, starts with the HTML doctype, holds no
// element or attribute that runs code or fetches anything, no http(s):// at all, a Content-Security-
// Policy that refuses anything but inline styles and data: images, and every <svg> has
// a title (also its aria-label), an x and a y axis, each with its line, tick labels and one axis title.
// Returns the facts for further checks.
nlohmann::json check_page(const std::string& html);

// The text a reader sees: <style> dropped, block elements on their own lines, cells separated by
// " | ", entities decoded, spaces collapsed.
std::string visible_text(const std::string& html);

// Replaces this build's version and commit (they change with every commit) by VERSION / COMMIT.
std::string normalize_build(std::string text);

// Compares `actual` with tests/golden/<name>; with KVGATE_UPDATE_GOLDEN=1 in the environment the
// file is rewritten instead. Returns "" when equal, else a message with the first differing line.
std::string golden_mismatch(const std::string& name, const std::string& actual);

}  // namespace kvtest

// Includes name their path from the repository root (DEVELOPING.md, "Includes"): the one include
// directory of every target is the root, so a quoted #include that is not a path from the root
// (e.g. "core/trial.h" for harness/core/trial.h) either fails to build or, worse, finds a file of
// the same name somewhere else. Angle-bracket includes (system and package headers) are not checked.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace {

// The folders CMake builds sources from (CMakeLists.txt's add_subdirectory).
const std::vector<std::string> kSourceFolders = {"harness", "kernels", "datasets", "reports", "tests"};

bool is_source(const fs::path& p) {
  static const std::vector<std::string> exts = {".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh", ".in"};
  const std::string e = p.extension().string();
  for (const auto& x : exts)
    if (e == x) return true;
  return false;
}

// Every "file:line: \"path\"" of a quoted #include under `root`/`folders` whose path is not a file
// below `root`.
std::vector<std::string> find_bad_includes(const fs::path& root, const std::vector<std::string>& folders) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> found;
  for (const std::string& file : kvtest::files_below(root.string(), folders)) {
    const fs::path path(file);
    if (!is_source(path)) continue;
    std::ifstream in(path);
    std::string line;
    std::smatch m;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
      if (line.find("include") == std::string::npos || !std::regex_search(line, m, include_line)) continue;
      const fs::path named = fs::path(m[1].str());
      const bool from_root = named.is_relative() && !named.empty() && *named.begin() != ".." && *named.begin() != ".";
      if (!from_root || !fs::is_regular_file(root / named))
        found.push_back(path.lexically_relative(root).generic_string() + ":" + std::to_string(n) + ": \"" + m[1].str() + "\"");
    }
  }
  return found;
}

}  // namespace

TEST_CASE("find_bad_includes: paths from the root pass; folder-relative, missing and dotted paths are listed") {
  kvtest::TempDir dir;
  const fs::path root = fs::path(dir.path()) / "repo";
  fs::create_directories(root / "harness" / "core");
  fs::create_directories(root / "kernels");
  fs::create_directories(root / "docs");
  kvtest::write_text((root / "harness" / "core" / "trial.h").string(), "#pragma once\n");
  kvtest::write_text((root / "kernels" / "kv.cu").string(),
                     "#include <vector>\n"
                     "#include \"harness/core/trial.h\"\n"
                     "#include \"core/trial.h\"\n"          // relative to harness/: not from the root
                     "  #  include \"kernels/none.h\"\n"    // no such file
                     "#include \"./harness/core/trial.h\"\n"  // dotted: not the one spelling
                     "// #include \"nowhere.h\" in a comment is not an include\n");
  kvtest::write_text((root / "kernels" / "notes.txt").string(), "#include \"core/trial.h\"\n");  // not a source file
  kvtest::write_text((root / "docs" / "x.cpp").string(), "#include \"core/trial.h\"\n");         // not a source folder
  const auto found = find_bad_includes(root, kSourceFolders);
  REQUIRE(found.size() == 3);
  CHECK(found[0] == "kernels/kv.cu:3: \"core/trial.h\"");
  CHECK(found[1] == "kernels/kv.cu:4: \"kernels/none.h\"");
  CHECK(found[2] == "kernels/kv.cu:5: \"./harness/core/trial.h\"");
}

TEST_CASE("every quoted #include in the sources names a file from the repository root") {
  // ctest runs the tests from the repository root.
  REQUIRE(fs::is_regular_file("harness/core/trial.h"));
  const auto found = find_bad_includes(fs::current_path(), kSourceFolders);
  std::string list;
  for (const auto& f : found) list += f + "\n";
  INFO("name the header by its path from the repository root (\"harness/core/trial.h\", \"kernels/kv_format.h\", "
       "\"tests/test_util.h\"), the only include directory:\n" +
       list);
  CHECK(found.empty());
}

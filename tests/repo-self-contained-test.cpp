// The repository carries every file its tests read: no file under tests/, scripts/ or
// .ci/ may name the sibling folder that holds the project's shared material next to a checkout (a
// clone of the repository alone has none). Test data lives in tests/data/ (kvtest::data_dir()).
//
// The patterns are built from pieces at run time so that this file does not match itself.
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/catch_compat.hpp"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace {

const std::string kName = std::string("sha") + "red";  // the sibling folder's name
const std::string kUp = "..";

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// Whether the name that ends at `end` goes on (shared_ptr, shared-memory, shared.h; not "shared." ending a sentence).
bool name_goes_on(const std::string& line, std::size_t end) {
  if (end >= line.size()) return false;
  if (name_char(line[end])) return true;
  return line[end] == '.' && end + 1 < line.size() && name_char(line[end + 1]);
}

bool ends_with(const std::string& s, std::size_t end, const std::string& suffix) {
  return end >= suffix.size() && s.compare(end - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether the text before `end` is a quoted parent step followed by a comma: `".."`, `'..', ` ...
// (the form of os.path.join(HERE, <up>, <name>) in Python).
bool quoted_parent_before(const std::string& line, std::size_t end) {
  std::size_t i = end;
  while (i > 0 && std::isspace(static_cast<unsigned char>(line[i - 1]))) --i;
  if (i == 0 || line[i - 1] != ',') return false;
  --i;
  while (i > 0 && std::isspace(static_cast<unsigned char>(line[i - 1]))) --i;
  if (i < 4) return false;
  const char q = line[i - 1];
  return (q == '"' || q == '\'') && line[i - 4] == q && line.compare(i - 3, 2, kUp) == 0;
}

// Whether `line` names the sibling folder: relative (<up>/<name>, <up>\<name>), as quoted path
// pieces (<up>, <name>), or absolute (`parent`/<name>, `parent` being the directory that holds the
// repository; empty to skip that form).
bool names_sibling_folder(const std::string& line, const std::string& parent) {
  for (std::size_t pos = line.find(kName); pos != std::string::npos; pos = line.find(kName, pos + 1)) {
    std::size_t begin = pos, end = pos + kName.size();
    const bool quoted = begin > 0 && (line[begin - 1] == '"' || line[begin - 1] == '\'') && end < line.size() &&
                        line[end] == line[begin - 1];
    if (quoted) {
      if (quoted_parent_before(line, begin - 1)) return true;
      continue;
    }
    if (name_goes_on(line, end)) continue;  // a longer name
    if (ends_with(line, begin, kUp + "/") || ends_with(line, begin, kUp + "\\")) return true;
    if (!parent.empty() && parent != "/" && ends_with(line, begin, parent + "/")) return true;
  }
  return false;
}

// Every "file:line: text" under `root`/`folders` that names the sibling folder; binary files
// (a NUL in their first 8 KiB), .git and __pycache__ are skipped.
std::vector<std::string> find_violations(const fs::path& root, const std::vector<std::string>& folders) {
  const std::string parent = fs::absolute(root).lexically_normal().parent_path().string();
  std::vector<std::string> found;
  for (const std::string& file : kvtest::files_below(root.string(), folders)) {
    const fs::path path(file);
    std::ifstream in(path, std::ios::binary);
    std::string head(8192, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (head.find('\0') != std::string::npos) continue;
    in.clear();
    in.seekg(0);
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n)
      if (line.find(kName) != std::string::npos && names_sibling_folder(line, parent))
        found.push_back(path.lexically_relative(root).string() + ":" + std::to_string(n) + ": " + line.substr(0, 200));
  }
  return found;
}

}  // namespace

TEST_CASE("names_sibling_folder: the forms that reach the sibling folder, and words that only look alike") {
  const std::string up = kUp + "/" + kName;
  CHECK(names_sibling_folder(up, ""));
  CHECK(names_sibling_folder("x = \"" + up + "/data/gsm8k/train.jsonl\"", ""));
  CHECK(names_sibling_folder("see " + up + ".", ""));
  CHECK(names_sibling_folder("cd " + kUp + "/" + kUp + "/" + kName + "/docs", ""));
  CHECK(names_sibling_folder("p = " + kUp + "\\" + kName + "\\data", ""));
  CHECK(names_sibling_folder("os.path.join(HERE, \"" + kUp + "\", \"" + kName + "\", \"data\")", ""));
  CHECK(names_sibling_folder("os.path.join(HERE, '" + kUp + "','" + kName + "')", ""));
  CHECK(names_sibling_folder("cat /work/" + kName + "/data/README.md", "/work"));

  CHECK_FALSE(names_sibling_folder("std::" + kName + "_ptr<int> p;", "/work"));
  CHECK_FALSE(names_sibling_folder("uses " + kName + " memory bank conflicts", "/work"));
  CHECK_FALSE(names_sibling_folder("#include \"" + kUp + "/" + kName + "_helpers.h\"", "/work"));
  CHECK_FALSE(names_sibling_folder("#include \"" + kUp + "/" + kName + ".h\"", "/work"));
  CHECK_FALSE(names_sibling_folder("\"" + kName + "\": 6100,", "/work"));
  CHECK_FALSE(names_sibling_folder("\"/" + kName + "\": 25948,", "/work"));
  CHECK_FALSE(names_sibling_folder("/other/" + kName + "/x", "/work"));
  CHECK_FALSE(names_sibling_folder("/work/" + kName + "/x", "/"));
}

TEST_CASE("find_violations lists file:line of each offending line and skips binary files") {
  kvtest::TempDir dir;
  const fs::path root = fs::path(dir.path()) / "repo";
  fs::create_directories(root / "tests" / "sub");
  fs::create_directories(root / "scripts" / "__pycache__");
  fs::create_directories(root / "docs");
  kvtest::write_text((root / "tests" / "ok.cpp").string(), "std::" + kName + "_ptr<int> p;\n");
  kvtest::write_text((root / "tests" / "sub" / "bad.py").string(),
                     "import os\n\nDATA = \"" + kUp + "/" + kName + "/data\"\n");
  kvtest::write_text((root / "scripts" / "__pycache__" / "x.pyc").string(), kUp + "/" + kName + "\n");
  kvtest::write_text((root / "scripts" / "blob.bin").string(), std::string("\0", 1) + kUp + "/" + kName + "\n");
  kvtest::write_text((root / "docs" / "elsewhere.md").string(), kUp + "/" + kName + "\n");  // not a scanned folder

  const auto found = find_violations(root, {"tests", "scripts", ".ci"});
  REQUIRE(found.size() == 1);
  CHECK(found[0].rfind("tests/sub/bad.py:3: DATA = ", 0) == 0);
}

TEST_CASE("no file under tests/, scripts/ or .ci/ names the sibling shared folder (test data lives in tests/data/)") {
  // ctest runs the tests from the repository root.
  REQUIRE(fs::is_directory("tests"));
  REQUIRE(fs::is_directory("scripts"));
  REQUIRE(fs::is_directory(kvtest::data_dir()));
  const auto found = find_violations(fs::current_path(), {"tests", "scripts", ".ci"});
  std::string list;
  for (const auto& f : found) list += f + "\n";
  INFO("these lines name the folder beside the repository, which a clone does not have; copy the data into "
       "tests/data/ (with its LICENSE and a row in tests/data/README.md) and read it through kvtest::data_dir():\n" +
       list);
  CHECK(found.empty());
}

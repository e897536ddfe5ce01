// The niah and multicode answer readers on arbitrary bytes: a grade with consistent fields, never
// a crash or an exception (an answer is never bad input).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "datasets/multicode/multicode.h"
#include "datasets/niah/niah.h"

namespace {

kvgate::Trial make(const char* id, nlohmann::json target, const char* grader) {
  kvgate::Trial t;
  t.id = id;
  t.task = grader;
  t.bucket = 4096;
  t.input = {{"prompt", "x"}};
  t.target = std::move(target);
  t.grader = {{"name", grader}};
  t.meta = {{"depth", 50.0}, {"depths", {10.0, 90.0}}, {"value_type", "numbers"}};
  return t;
}

void check(const kvgate::Grade& g) {
  const bool ok = (g.score == 0.0 || g.score == 1.0) && g.passed == (g.score == 1.0) && !g.extracted.empty();
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kvgate::Trial niah = make("niah/4096/0000", "4417926", "niah");
  static const kvgate::Trial words = make("niah/4096/0001", "Amber-Kettle", "niah");
  static const kvgate::Trial codes = make(
      "multicode/4096/0000",
      {{"codes", {{{"name", "Juniper-24"}, {"code", "951936"}}, {{"name", "Juniper-2"}, {"code", "120455"}}}}}, "multicode");
  const std::string response(reinterpret_cast<const char*>(data), size);
  check(kvgate::niah::grade_niah({.trial = niah, .response = response}));
  check(kvgate::niah::grade_niah({.trial = words, .response = response}));
  const kvgate::Grade g = kvgate::multicode::grade_multicode({.trial = codes, .response = response});
  check(g);
  const double f = g.details.at("fraction_right").get<double>();
  if (!(f >= 0 && f <= 1) || (g.passed && f != 1.0)) std::abort();
  return 0;
}

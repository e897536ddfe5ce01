// The reference decoder's attention numerics in the pinning check and the reports' run facts: a
// baseline and a candidate in different modes are a pinning difference; a reference run.json
// without the field ran exact (every run before the switch); other backends record none.
#include <algorithm>

#include "harness/compare/pinning.h"
#include "harness/core/manifest.h"
#include "reports/run_facts.h"
#include "tests/catch_compat.hpp"

using kvgate::RunManifest;
using namespace kvgate::compare;

namespace {

RunManifest reference_run(const char* numerics) {
  RunManifest m;
  m.backend = "reference";
  m.engine = {{"engine", "kvgate reference decoder, CPU"}, {"summary", {{"engine", "kvgate-reference"}}}};
  if (numerics) m.engine["attention_numerics"] = numerics;
  return m;
}

const PinnedFact* find(const std::vector<PinnedFact>& facts, const std::string& field) {
  const auto it = std::find_if(facts.begin(), facts.end(), [&](const PinnedFact& f) { return f.field == field; });
  return it == facts.end() ? nullptr : &*it;
}

bool compared(const Pinning& p, const std::string& label) {
  return std::find(p.compared.begin(), p.compared.end(), label) != p.compared.end();
}

}  // namespace

TEST_CASE("pinning: attention numerics exact against engine is a difference; absent means exact", "[pinning][numerics]") {
  const Pinning p = check_pinning(reference_run("exact"), reference_run("engine"), "bf16", "fp8");
  const PinnedFact* d = find(p.differences, "attention_numerics");
  REQUIRE(d);
  CHECK(describe(*d) == "attention numerics exact -> engine");
  CHECK_FALSE(p.pinned());

  const Pinning old = check_pinning(reference_run(nullptr), reference_run("engine"), "old", "new");
  d = find(old.differences, "attention_numerics");
  REQUIRE(d);
  CHECK(describe(*d) == "attention numerics exact -> engine");

  const Pinning same = check_pinning(reference_run(nullptr), reference_run("exact"), "old", "new");
  CHECK(same.pinned());
  CHECK(compared(same, "attention numerics"));
  CHECK(check_pinning(reference_run("engine"), reference_run("engine"), "a", "b").pinned());
}

TEST_CASE("pinning: endpoint runs record no attention numerics; against a reference run it is one-sided", "[pinning][numerics]") {
  RunManifest endpoint;
  endpoint.backend = "openai";
  const Pinning p = check_pinning(endpoint, endpoint, "a", "b");
  CHECK_FALSE(compared(p, "attention numerics"));
  CHECK_FALSE(find(p.one_sided, "attention_numerics"));
  const Pinning mixed = check_pinning(endpoint, reference_run("engine"), "server", "reference");
  const PinnedFact* f = find(mixed.one_sided, "attention_numerics");
  REQUIRE(f);
  CHECK(describe(*f) == "attention numerics (not recorded) -> engine");
}

TEST_CASE("run facts: the reports read the attention numerics beside the engine", "[reports][numerics]") {
  CHECK(kvgate::reports::run_facts(reference_run("engine")).attention_numerics == "engine");
  CHECK(kvgate::reports::run_facts(reference_run(nullptr)).attention_numerics == "exact");
  RunManifest endpoint;
  endpoint.backend = "openai";
  CHECK(kvgate::reports::run_facts(endpoint).attention_numerics.empty());
}

#include "datasets/haystack/prose_generator.h"

#include "harness/core/error.h"
#include "datasets/haystack/prose_words.h"

namespace kvgate::haystack {

namespace {

std::string_view pick(Rng& rng, Words w) { return w[rng.below(w.size())]; }

// A word from `w` other than `avoid` (when the list has another).
std::string_view pick_other(Rng& rng, Words w, std::string_view avoid) {
  for (int i = 0; i < 8; ++i) {
    std::string_view s = pick(rng, w);
    if (s != avoid) return s;
  }
  return pick(rng, w);
}

void capitalize(std::string& s) {
  std::size_t i = (!s.empty() && s[0] == '"') ? 1 : 0;
  if (i < s.size() && s[i] >= 'a' && s[i] <= 'z') s[i] = static_cast<char>(s[i] - 'a' + 'A');
}

}  // namespace

ProseGenerator::ProseGenerator(std::uint64_t seed) : rng_(seed) {
  domain_ = rng_.below(prose_domains().size());
}

ProseGenerator::Person ProseGenerator::random_named_person() {
  const ProseWords& w = prose_words();
  if (rng_.bernoulli(0.5)) return {pick(rng_, w.female_names), "she", "her"};
  return {pick(rng_, w.male_names), "he", "his"};
}

ProseGenerator::Person ProseGenerator::random_person() {
  if (rng_.bernoulli(0.5)) return random_named_person();
  return {pick(rng_, prose_domains()[domain_].roles), "they", "their"};
}

void ProseGenerator::start_paragraph() {
  if (!started_ || rng_.bernoulli(0.4)) domain_ = rng_.below(prose_domains().size());
  if (!started_ || rng_.bernoulli(0.6)) protagonist_ = random_named_person();
  do second_ = random_named_person();
  while (second_.name == protagonist_.name);
  left_in_paragraph_ = 3 + static_cast<int>(rng_.below(6));
  paragraph_first_ = true;
}

std::string ProseGenerator::fill(std::string_view tmpl) {
  const ProseWords& w = prose_words();
  const ProseDomain& d = prose_domains()[domain_];
  std::string out;
  out.reserve(tmpl.size() + 64);
  subject_ = protagonist_;
  place_ = {};
  std::string_view adj;
  std::size_t i = 0;
  while (i < tmpl.size()) {
    const char c = tmpl[i];
    if (c != '{') {
      out.push_back(c);
      ++i;
      continue;
    }
    const std::size_t close = tmpl.find('}', i);
    const std::string_view slot = tmpl.substr(i + 1, close - i - 1);
    i = close + 1;
    std::string_view v;
    if (slot == "S") {
      // A paragraph opens with its protagonist by name; later sentences mix name, pronoun and others.
      const double r = rng_.uniform();
      subject_ = (paragraph_first_ || r < 0.75) ? protagonist_ : random_person();
      v = (!paragraph_first_ && r >= 0.45 && r < 0.75) ? subject_.pronoun : subject_.name;
    } else if (slot == "S2") {
      Person p = rng_.bernoulli(0.6) ? second_ : random_person();
      if (p.name == subject_.name) p = (subject_.name == second_.name) ? protagonist_ : second_;
      v = p.name;
    } else if (slot == "pron") v = subject_.pronoun;
    else if (slot == "pos") v = subject_.possessive;
    else if (slot == "place") v = place_ = pick(rng_, d.places);
    else if (slot == "place2") v = pick_other(rng_, d.places, place_);
    else if (slot == "obj") v = pick(rng_, d.objects);
    else if (slot == "things") v = pick(rng_, d.things);
    else if (slot == "people") v = pick(rng_, d.people);
    else if (slot == "topic") v = pick(rng_, d.topics);
    else if (slot == "sound") v = pick(rng_, d.sounds);
    else if (slot == "smell") v = pick(rng_, d.smells);
    else if (slot == "event") v = pick(rng_, d.events);
    else if (slot == "adj") v = adj = pick(rng_, w.adjectives);
    else if (slot == "adj2") v = pick_other(rng_, w.adjectives, adj);
    else if (slot == "feel") v = pick(rng_, w.feelings);
    else if (slot == "weather") v = pick(rng_, w.weather);
    else if (slot == "time") v = pick(rng_, w.times);
    else if (slot == "duration") v = pick(rng_, w.durations);
    else if (slot == "period") v = pick(rng_, w.periods);
    else if (slot == "season") v = pick(rng_, w.seasons);
    else if (slot == "motion") v = pick(rng_, w.motions);
    else if (slot == "vt") v = pick(rng_, w.verbs_past);
    else if (slot == "vtb") v = pick(rng_, w.verbs_base);
    else if (slot == "vi") v = pick(rng_, w.verbs_intrans);
    else if (slot == "said") v = pick(rng_, w.saids);
    else if (slot == "manner") v = pick(rng_, w.manners);
    else if (slot == "quote") v = pick(rng_, w.quotes);
    else if (slot == "num") v = pick(rng_, w.numbers);
    else if (slot == "judgement") v = pick(rng_, w.judgements);
    else if (slot == "answer") v = pick(rng_, w.answers);
    else if (slot == "animal") v = pick(rng_, w.animals);
    else if (slot == "gerund") v = pick(rng_, w.gerunds);
    else if (slot == "builder") v = pick(rng_, w.builders);
    else throw Error("prose template slot {" + std::string(slot) + "} is unknown", kExitInternal);
    out.append(v);
  }
  capitalize(out);
  return out;
}

std::string ProseGenerator::unique(std::string_view kind, bool short_sentence) {
  const Words templates = short_sentence ? prose_short_templates() : prose_templates();
  for (int attempt = 0; attempt < 200; ++attempt) {
    std::string s = fill(pick(rng_, templates));
    // Some ordinary sentences get a trailing clause, for varied lengths and rhythm.
    if (!short_sentence && s.back() == '.' && s.front() != '"' && rng_.bernoulli(0.2)) {
      s.pop_back();
      s += ", ";
      s += pick(rng_, prose_words().tails);
      s += '.';
    }
    if (seen_.insert(hash64(s)).second) return s;
  }
  throw Error("prose generator: no new " + std::string(kind) + " sentence after 200 attempts", kExitInternal);
}

Sentence ProseGenerator::next() {
  if (left_in_paragraph_ == 0) start_paragraph();
  started_ = true;
  Sentence s{unique("ordinary", false), paragraph_first_};
  paragraph_first_ = false;
  --left_in_paragraph_;
  return s;
}

std::string ProseGenerator::next_short() {
  if (!started_) {
    start_paragraph();
    started_ = true;
  }
  const bool first = paragraph_first_;
  paragraph_first_ = false;  // short sentences never name the protagonist by default rule
  std::string s = unique("short", true);
  paragraph_first_ = first;
  return s;
}

}  // namespace kvgate::haystack

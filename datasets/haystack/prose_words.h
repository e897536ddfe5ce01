// Vocabulary and sentence templates of the prose generator. Written for kvgate (no third-party text),
// so haystacks carry no license. Templates use {slot} names that prose_generator.cpp fills.
#pragma once
#include <span>

namespace kvgate::haystack {

using Words = std::span<const char* const>;

// One setting a paragraph is about: its places, objects and people, so sentences within a
// paragraph hang together.
struct ProseDomain {
  Words places;      // "the harbor"
  Words objects;     // "a coil of rope"
  Words things;      // plural nouns: "nets"
  Words people;      // plural groups: "fishermen"
  Words roles;       // one person by role: "the harbor master"
  Words topics;      // "the price of fuel"
  Words sounds;      // "the clang of a bell"
  Words smells;      // "salt and diesel"
  Words events;      // "the storm"
};

std::span<const ProseDomain> prose_domains();

struct ProseWords {
  Words female_names, male_names;
  Words adjectives;      // "quiet"
  Words feelings;        // "uneasy"
  Words weather;         // full clauses: "a cold wind came off the water"
  Words times;           // "early in the morning"
  Words durations;       // "nearly an hour"
  Words periods;         // "afternoon"
  Words seasons;         // "autumn"
  Words motions;         // "walked"
  Words verbs_past;      // transitive, past: "repaired"
  Words verbs_base;      // transitive, base form: "repair"
  Words verbs_intrans;   // "waited by the window"
  Words saids;           // "said"
  Words manners;         // "without looking up"
  Words quotes;          // speech without quotes or final punctuation: "We should leave before dark"
  Words numbers;         // "three"
  Words judgements;      // "a mistake"
  Words answers;         // "vague"
  Words animals;         // "heron"
  Words tails;           // clause tails: "although nobody asked why"
  Words gerunds;         // "mending the fence"
  Words builders;        // "a family of stonemasons"
};

const ProseWords& prose_words();

// Sentence templates: ordinary ones, and short ones (for filling the last few bytes of a haystack).
Words prose_templates();
Words prose_short_templates();

}  // namespace kvgate::haystack

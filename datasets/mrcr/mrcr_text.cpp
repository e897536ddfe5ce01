#include "datasets/mrcr/mrcr_text.h"

#include <cctype>

namespace kvgate::mrcr {

namespace {

using Words = std::vector<std::string>;

const Words kAdjectives = {
    "quiet", "golden", "restless", "ancient", "gentle", "silver", "hidden", "patient", "bright", "weathered",
    "curious", "distant", "humble", "wild", "tender", "stubborn", "luminous", "narrow", "hollow", "velvet",
    "crimson", "solemn", "playful", "fragile", "enormous", "forgotten", "careful", "drowsy", "fearless", "misty",
    "peculiar", "radiant", "rugged", "serene", "slender", "sturdy", "tireless", "uneven", "vivid", "wandering",
    "amber", "brisk", "crooked", "dusty", "earnest", "faint", "glassy", "hushed", "idle", "jagged",
    "kindly", "lonely", "mellow", "nimble", "ordinary", "pale", "rusty", "shallow", "thoughtful", "woolen"};
const Words kNouns = {
    "river", "lantern", "window", "garden", "mountain", "harbor", "meadow", "bridge", "forest", "candle",
    "compass", "notebook", "orchard", "staircase", "village", "shoreline", "chimney", "wagon", "kettle", "blanket",
    "feather", "pebble", "doorway", "field", "lighthouse", "market", "pathway", "rooftop", "valley", "well",
    "fence", "hill", "island", "journal", "ladder", "map", "mirror", "needle", "oar", "pond",
    "quilt", "ribbon", "saddle", "tower", "umbrella", "violin", "wheelbarrow", "workshop", "canyon", "cottage",
    "glacier", "clock", "railway", "tide", "cloud", "hearth", "barn", "boat", "trail", "library"};
const Words kPlaces = {
    "the harbor", "a quiet valley", "the old market", "the edge of the forest", "a crowded station",
    "the riverbank", "a windswept hill", "the village square", "a narrow lane", "the northern coast",
    "the mountain pass", "a sunlit courtyard", "the empty schoolhouse", "a misty marsh", "the city gates",
    "the back of the library", "a fishing village", "the desert road", "the top of the tower", "a small island",
    "the orchard", "the frozen lake", "a busy crossroads", "the lighthouse steps", "the garden wall"};
const Words kTimes = {
    "at dawn", "in early spring", "after the storm", "late at night", "on a cold morning", "before the harvest",
    "during the long winter", "at the end of summer", "when the tide turned", "as the sun went down",
    "on the first day of autumn", "in the middle of the afternoon", "long ago", "every evening", "at midnight",
    "after the rain", "before anyone woke", "on market day", "in the quiet hours", "when the bells rang"};
const Words kAdverbs = {
    "slowly", "quietly", "gently", "suddenly", "carefully", "patiently", "boldly", "softly", "steadily", "warmly",
    "eagerly", "calmly", "cautiously", "gracefully", "proudly", "silently", "swiftly", "tenderly", "wisely", "happily"};
const Words kAbstract = {
    "patience", "memory", "courage", "kindness", "wonder", "silence", "hope", "curiosity", "balance", "freedom",
    "gratitude", "resilience", "solitude", "friendship", "trust", "change", "belonging", "imagination", "time",
    "tradition", "harmony", "loss", "renewal", "simplicity", "devotion", "humility", "joy", "longing", "faith",
    "discovery"};
const Words kPeople = {
    "the old fisherman", "a young teacher", "the baker", "a traveling musician", "the village doctor",
    "my grandmother", "a quiet stranger", "the ferry captain", "a curious child", "the night watchman",
    "the gardener", "a retired sailor", "the librarian", "an old friend", "the shepherd", "a young painter",
    "the blacksmith", "the mayor", "a wandering poet", "the mapmaker"};
const Words kNames = {
    "Elena", "Marcus", "Ada", "Tomas", "Ines", "Oliver", "Priya", "Samuel", "Hana", "Victor",
    "Lucia", "Jonah", "Mira", "Felix", "Nadia", "Arthur", "Clara", "Desmond", "Yara", "Henrik"};
const Words kPastVerbs = {
    "carried", "noticed", "painted", "followed", "remembered", "gathered", "watched", "mended", "guarded",
    "welcomed", "studied", "admired", "crossed", "protected", "discovered", "described", "shared", "measured",
    "sketched", "praised", "explored", "greeted", "collected", "questioned", "honored"};
const Words kIntransitive = {
    "wandered", "waited", "lingered", "listened", "rested", "paused", "laughed", "wondered", "drifted",
    "returned", "hesitated", "sang", "gathered", "settled", "traveled", "whispered", "worked", "dreamed"};

const Words kFormats = {"poem",   "short story", "essay", "blog post",    "riddle",
                        "speech", "formal letter", "song", "news article", "diary entry"};
const std::vector<ReplyLength> kLengths = {{80, 220},  {250, 600}, {300, 650}, {250, 550}, {40, 120},
                                           {200, 500}, {150, 350}, {120, 260}, {200, 450}, {150, 350}};

const Words kTopics = {
    "tapirs", "lighthouses", "volcanoes", "owls", "glaciers", "bicycles", "libraries", "honeybees", "thunderstorms",
    "lanterns", "octopuses", "deserts", "clocks", "orchards", "trains", "whales", "mushrooms", "bridges", "kites",
    "foxes", "rivers", "chess", "lighthouse keepers", "snowfall", "coral reefs", "windmills", "hedgehogs",
    "sailboats", "bread", "the moon", "penguins", "old maps", "fireflies", "mountains", "teapots", "tides",
    "elephants", "gardens", "typewriters", "comets", "autumn leaves", "violins", "ravens", "caves", "markets",
    "sunflowers", "otters", "bookshops", "rain", "hot air balloons", "salmon", "forests", "keys", "jellyfish",
    "pianos", "wolves", "islands", "candles", "deer", "harbors", "telescopes", "butterflies", "quilts", "camels",
    "waterfalls", "frogs", "castles", "umbrellas", "cranes", "canyons", "beekeepers", "seashells", "tortoises",
    "fog", "letters", "squirrels", "meadows", "submarines", "lemurs", "pottery", "sea turtles", "cathedrals",
    "peacocks", "compasses", "rainbows", "badgers", "ferries", "spiders", "wheat fields", "snails", "lakes",
    "dragons", "robots", "puffins", "mirrors", "starlight", "cats", "dogs", "horses", "clouds", "gardeners",
    "blacksmiths", "deep sea fish", "sloths", "cities at night", "baobab trees", "river otters", "moss",
    "ice skaters", "seagulls", "pine trees", "the ocean", "the wind", "kangaroos", "parrots", "tea ceremonies",
    "sand dunes", "old photographs", "paper boats", "migrating geese", "flamingos", "beavers", "hummingbirds"};

// Sentence templates. Slots: {A} adjective, {N} noun, {P} place, {W} time, {D} adverb, {X} abstract
// noun, {H} person, {V} past transitive verb, {I} intransitive past verb, {T} the topic. Topics
// may be plural or mass nouns, so they never take a present-tense verb.
const Words kStory = {
    "{W}, {H} {I} near {P}, thinking about {T}.",
    "Nobody in the village had ever seen {T} so close to {P}.",
    "{H} {V} the {A} {N} and {I} {D}.",
    "The {N} was {A}, and the air smelled of {X}.",
    "It was {W} when the first of the {T} appeared by the {N}.",
    "{H} had always believed that {T} carried a kind of {X}.",
    "For a long moment, nothing moved except the {A} {N}.",
    "Later, {H} {V} the {N} and told everyone about {T}.",
    "The children {I} at {P} and waited for {T} to return.",
    "Every season brought new stories of {T}, each more {A} than the last.",
    "{H} {D} {V} a {A} {N} left behind at {P}.",
    "By the time the {N} grew {A}, the {T} had vanished into {P}.",
    "Somewhere beyond {P}, the {T} {I} in the {A} light.",
    "{H} smiled, because {X} had finally found its way home.",
    "The journey to {P} took three days and most of their {X}.",
    "Even the {A} {N} seemed to listen when {H} spoke of {T}.",
};
const Words kEssay = {
    "The history of {T} is closely tied to {X} and to the places where people meet them.",
    "Many writers have described {T} as {A}, yet the truth is more complicated.",
    "To understand {T}, one must first consider the role of {X} in everyday life.",
    "Researchers who studied {T} near {P} recorded patterns that surprised them.",
    "A {A} {N} offers a useful comparison, because both depend on {X}.",
    "Critics argue that {T} receive too much attention, but this view overlooks {X}.",
    "In practical terms, {T} shape how communities think about {X} and {X}.",
    "The evidence gathered {W} suggests a {A} relationship between {T} and their surroundings.",
    "Such observations remind us that {X} is rarely simple.",
    "When {H} first described {T}, the account was treated as a curiosity.",
    "Over time, the study of {T} has become a lesson in {X}.",
    "The most convincing argument rests on a {A} observation about the {N}.",
    "It would be a mistake to treat {T} as a mere symbol of {X}.",
    "Ultimately, the value of {T} lies in the {X} they inspire.",
};
const Words kPoemLines = {
    "{A} {T} beneath a {A} sky", "the {N} remembers {X}", "{W}, the {N} grows {A}", "I carry {X} like a {N}",
    "and {T} drift {D} through {P}", "where the {A} {N} sleeps", "we {I} until the light turned {A}",
    "a song of {T} and {X}", "{D} the {A} river bends", "no {N} could hold such {X}", "past {P} and back again",
    "the wind still speaks of {T}", "{A} and {A}, the evening falls", "O {T}, keepers of {X}",
    "each {N} a {A} promise", "we learned {X} from the {N}", "the world {I}, {A} and slow",
    "{W} I dreamed of {T}", "beyond the {A} {N}, a door", "and {X} answered, {D}",
};
const Words kRiddleLines = {
    "I am {A} but never {A}", "I live near {P} yet I own no {N}", "you find me {W}, though I leave no trace",
    "I keep {X} the way a {N} keeps water", "the {H} knows my name but rarely says it",
    "I am older than the {N} and younger than {X}", "I wear no crown, yet I rule {P}",
    "I travel {D} and never lose my way", "some call me {A}, others call me {A}",
};
const Words kOpeners = {
    "Friends, neighbors, and honored guests, thank you for being here to talk about {T}.",
    "I want to begin with a simple story about {T} and a {A} {N}.",
    "We gather {W} to celebrate {T} and the {X} they bring us.",
};
const Words kBlogTips = {
    "Start small: a {A} {N} is enough to begin.", "Visit {P} {W} if you can.",
    "Keep a notebook about {T} and write down every {A} detail.", "Ask {H} what they remember about {T}.",
    "Don't rush it; {X} matters more than speed.", "Bring a {N}, just in case.",
};

std::string pick(Rng& rng, const Words& w) { return w[rng.below(w.size())]; }

std::string capitalize(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string title_case(std::string_view s) {
  std::string out(s);
  bool start = true;
  for (char& c : out) {
    if (start) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    start = c == ' ';
  }
  return out;
}

int count_words(std::string_view s) {
  int n = 0;
  bool in = false;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in) ++n;
    in = !space;
  }
  return n;
}

std::string fill(std::string_view tmpl, std::string_view topic, Rng& rng) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '{') {
      out.push_back(tmpl[i]);
      continue;
    }
    const std::size_t close = tmpl.find('}', i);
    const std::string_view slot = tmpl.substr(i + 1, close - i - 1);
    i = close;
    if (slot == "T") out += topic;
    else if (slot == "A") out += pick(rng, kAdjectives);
    else if (slot == "N") out += pick(rng, kNouns);
    else if (slot == "P") out += pick(rng, kPlaces);
    else if (slot == "W") out += pick(rng, kTimes);
    else if (slot == "D") out += pick(rng, kAdverbs);
    else if (slot == "X") out += pick(rng, kAbstract);
    else if (slot == "H") out += pick(rng, kPeople);
    else if (slot == "V") out += pick(rng, kPastVerbs);
    else if (slot == "I") out += pick(rng, kIntransitive);
  }
  return capitalize(out);
}

// Builds a reply unit by unit until it has `words` words.
class Writer {
 public:
  Writer(std::string_view topic, int words, Rng& rng) : topic_(topic), want_(words), rng_(rng) {}
  bool full() const { return words_ >= want_; }
  void raw(const std::string& s) {
    text_ += s;
    words_ += count_words(s);
  }
  std::string sentence(const Words& tmpls) { return fill(pick(rng_, tmpls), topic_, rng_); }
  // A paragraph of 3..6 sentences (fewer when the reply is nearly full).
  void paragraph(const Words& tmpls, const std::string& lead = "") {
    if (!text_.empty()) raw("\n\n");
    std::string p = lead;
    int p_words = count_words(lead);
    const int n = static_cast<int>(rng_.range(3, 6));
    for (int i = 0; i < n && (i == 0 || words_ + p_words < want_); ++i) {
      const std::string s = sentence(tmpls);
      p_words += count_words(s);
      p += (p.empty() ? "" : " ") + s;
    }
    text_ += p;
    words_ += p_words;
  }
  void stanza(const Words& lines, int n) {
    if (!text_.empty()) raw("\n\n");
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? "\n" : "") + sentence(lines) + (i + 1 == n ? "." : ",");
    raw(s);
  }
  Rng& rng() { return rng_; }
  std::string_view topic() const { return topic_; }
  std::string take() { return std::move(text_); }

 private:
  std::string_view topic_;
  int want_, words_ = 0;
  Rng& rng_;
  std::string text_;
};

void write_poem(Writer& w) {
  while (!w.full()) w.stanza(kPoemLines, 4);
}

void write_story(Writer& w) {
  w.raw("**The " + title_case(pick(w.rng(), kAdjectives)) + " " + title_case(pick(w.rng(), kNouns)) + "**");
  while (!w.full()) w.paragraph(kStory);
}

void write_essay(Writer& w) {
  w.raw("**" + title_case(w.topic()) + " and the Meaning of " + title_case(pick(w.rng(), kAbstract)) + "**");
  static const Words leads = {"", "First, ", "Moreover, ", "In addition, ", "At the same time, ", "Finally, "};
  int i = 0;
  while (!w.full()) {
    const std::string lead = i == 0 ? "" : leads[static_cast<std::size_t>(1 + (i - 1) % 5)];
    std::string first = w.sentence(kEssay);
    if (!lead.empty()) first[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(first[0])));
    w.paragraph(kEssay, lead + first);
    ++i;
  }
  w.raw("\n\nIn conclusion, the story of " + std::string(w.topic()) + " deserves our attention because it teaches " +
        pick(w.rng(), kAbstract) + ".");
}

void write_blog(Writer& w) {
  w.raw("# " + title_case(pick(w.rng(), kAdjectives)) + " Notes on " + title_case(w.topic()));
  w.paragraph(kStory);
  w.raw("\n\nA few things I have learned:\n");
  for (int i = 0; i < 3; ++i) w.raw("\n- " + w.sentence(kBlogTips));
  while (!w.full()) w.paragraph(kEssay);
  w.raw("\n\nThanks for reading, and share your own stories about " + std::string(w.topic()) + " in the comments!");
}

void write_riddle(Writer& w) {
  for (bool first = true; !w.full(); first = false) w.raw((first ? "" : "\n") + w.sentence(kRiddleLines) + ",");
  w.raw("\nWhat am I?\n\nAnswer: " + std::string(w.topic()) + ".");
}

void write_speech(Writer& w) {
  w.raw(w.sentence(kOpeners));
  while (!w.full()) w.paragraph(w.rng().bernoulli(0.5) ? kStory : kEssay);
  w.raw("\n\nThank you.");
}

void write_letter(Writer& w) {
  w.raw("Dear " + pick(w.rng(), kNames) + ",\n\nI am writing to you about " + std::string(w.topic()) + ".");
  while (!w.full()) w.paragraph(kEssay);
  w.raw("\n\nSincerely,\n" + pick(w.rng(), kNames));
}

void write_song(Writer& w) {
  w.raw("Verse 1:");
  w.stanza(kPoemLines, 4);
  Rng chorus_rng(w.rng().next());
  Writer chorus(w.topic(), 1, chorus_rng);
  chorus.stanza(kPoemLines, 4);
  const std::string refrain = "\n\nChorus:\n" + chorus.take();  // the same chorus each time
  int verse = 2;
  while (!w.full()) {
    w.raw(refrain);
    if (w.full()) break;
    w.raw("\n\nVerse " + std::to_string(verse++) + ":");
    w.stanza(kPoemLines, 4);
  }
}

void write_news(Writer& w) {
  w.raw("**" + title_case(pick(w.rng(), kAdjectives)) + " Discovery Puts " + title_case(w.topic()) + " in the Spotlight**\n\n");
  w.raw(capitalize(pick(w.rng(), kPlaces)) + " — " + w.sentence(kStory));
  while (!w.full()) {
    w.paragraph(kStory);
    if (!w.full()) w.raw("\n\n\"" + w.sentence(kEssay) + "\" said " + pick(w.rng(), kPeople) + ".");
  }
}

void write_diary(Writer& w) {
  w.raw("Dear Diary,");
  while (!w.full()) w.paragraph(kStory);
  w.raw("\n\nUntil tomorrow.");
}

}  // namespace

const std::vector<std::string>& formats() { return kFormats; }
const std::vector<std::string>& topics() { return kTopics; }

std::string ask_text(std::string_view format, std::string_view topic) {
  const bool vowel = !format.empty() && std::string_view("aeiou").find(format[0]) != std::string_view::npos;
  return std::string("write ") + (vowel ? "an " : "a ") + std::string(format) + " about " + std::string(topic);
}

std::string ordinal(int n) {
  const int m100 = n % 100, m10 = n % 10;
  const char* suffix = (m100 >= 11 && m100 <= 13) ? "th" : m10 == 1 ? "st" : m10 == 2 ? "nd" : m10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

ReplyLength reply_length(std::size_t format) { return kLengths.at(format); }

std::string write_reply(std::size_t format, std::string_view topic, int words, Rng& rng) {
  Writer w(topic, words < 1 ? 1 : words, rng);
  switch (format) {
    case 0: write_poem(w); break;
    case 1: write_story(w); break;
    case 2: write_essay(w); break;
    case 3: write_blog(w); break;
    case 4: write_riddle(w); break;
    case 5: write_speech(w); break;
    case 6: write_letter(w); break;
    case 7: write_song(w); break;
    case 8: write_news(w); break;
    default: write_diary(w); break;
  }
  return w.take();
}

}  // namespace kvgate::mrcr

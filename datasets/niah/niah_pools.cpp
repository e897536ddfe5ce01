// Key and value pools of the niah task: kvgate's own word lists, kept apart from the prose
// generator's vocabulary so a key never appears in a generated haystack.
#include <cstdio>

#include "datasets/niah/niah.h"

namespace kvgate::niah {

namespace {

const char* const kKeyAdjectives[] = {
    "amber", "brisk", "candid", "dapper", "eager", "fabled", "gallant", "hushed", "icy", "jaunty", "keen", "lavish",
    "mellow", "nimble", "opal", "placid", "quirky", "rustic", "scarlet", "tawny", "umber", "vivid", "wistful",
    "zesty", "azure", "bashful", "cobalt", "dainty", "elfin", "frosted", "gilded", "hazy", "indigo", "jovial",
    "lucky", "mossy", "noble", "ochre", "plucky", "regal", "sable", "tidal", "velvet", "woolly", "zealous",
    "breezy", "crimson", "dusky", "ebony", "feisty", "glossy", "humble", "ivory", "jolly", "lunar", "misty",
    "nutty", "olive", "prickly", "rosy"};
const char* const kKeyNouns[] = {
    "lantern", "walrus", "teapot", "compass", "falcon", "thimble", "marble", "pretzel", "kettle", "trumpet",
    "pelican", "acorn", "biscuit", "cactus", "dolphin", "easel", "fiddle", "gazebo", "hammock", "igloo", "jigsaw",
    "kayak", "ladle", "mitten", "nugget", "oyster", "parsnip", "quill", "raccoon", "saddle", "tulip", "ukulele",
    "violin", "wombat", "yak", "zeppelin", "anchor", "bonnet", "candle", "dragon", "emerald", "feather", "goblet",
    "harpoon", "iguana", "jackal", "koala", "lobster", "muffin", "napkin", "otter", "pebble", "quokka", "rocket",
    "sparrow", "thistle", "umbrella", "vulture", "waffle", "yodel", "badger", "cobbler", "dynamo", "ember",
    "flamingo", "gondola", "hedgehog", "inkwell", "juniper", "kiwi", "lemur", "meadow", "nectar", "orchid",
    "puffin", "quartz", "rhubarb", "scooter", "tortoise", "urchin"};

template <std::size_t N>
const char* pick(Rng& rng, const char* const (&a)[N]) {
  return a[rng.below(N)];
}

}  // namespace

std::string random_key(Rng& rng) {
  std::string k = pick(rng, kKeyAdjectives);
  k += '-';
  k += pick(rng, kKeyNouns);
  return k;
}

std::string random_value(Rng& rng, ValueType type) {
  switch (type) {
    case ValueType::numbers:
      return std::to_string(rng.range(1000000, 9999999));
    case ValueType::words:
      return random_key(rng);
    case ValueType::uuids: {
      unsigned char b[16];
      for (int i = 0; i < 16; i += 8) {
        const std::uint64_t r = rng.next();
        for (int k = 0; k < 8; ++k) b[i + k] = static_cast<unsigned char>(r >> (8 * k));
      }
      b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
      b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
      char out[37];
      std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                    b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
      return out;
    }
  }
  return {};
}

}  // namespace kvgate::niah

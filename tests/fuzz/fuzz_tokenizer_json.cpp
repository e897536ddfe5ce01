// The tokenizer.json loader on arbitrary bytes: a clean kvgate::Error or a tokenizer that encodes
// and decodes (a sample text and the input itself, when it is UTF-8) without crashing.
#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/error.h"
#include "harness/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const kvgate::Tokenizer t = kvgate::Tokenizer::from_strings(input, "", "fuzz/tokenizer.json");
    for (const std::string_view text : {std::string_view("Hello, world! 123 4567 <|end|> \xE6\x9D\xB1\xE4\xBA\xAC \t\n  x"), input}) {
      try {
        const auto ids = t.encode(text, true);
        (void)t.decode(ids, false);
        (void)t.decode(ids, true);
        (void)t.count(text);
      } catch (const kvgate::Error&) {
      }
    }
    const std::int32_t odd[] = {-1, 0, 1, 255, 256, 1 << 30};
    (void)t.decode(odd);
  } catch (const kvgate::Error&) {
  }
  return 0;
}

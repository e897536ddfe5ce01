// Strings from model outputs, run labels and task files are hostile: they may hold markup, quotes,
// control characters, bidirectional overrides or invalid UTF-8. Every such string reaches a report
// only through these functions, so an answer can never run code in (or reshape) a report.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kvgate::reports {

// Valid UTF-8 that is also valid XML 1.0 character data, readable as text whatever the font:
//   invalid bytes, surrogates, U+FFFE/U+FFFF -> U+FFFD (one per invalid byte);
//   CR LF -> LF; every other control character but tab and newline (C0, DEL, C1), bidi embeddings,
//   overrides and isolates, LRM/RLM, zero-width characters, line/paragraph separators and the BOM ->
//   "<U+001B>" in visible brackets (U+27E8/U+27E9), so a reversed, coloured or hidden answer shows
//   what it holds.
std::string clean_text(std::string_view text);

// clean_text, then & < > " ' as character references: safe in HTML/XML text and in quoted
// attribute values. The ':' of "://" is written as "&#58;" so that a URL in the data (an endpoint,
// a link a model wrote) is shown as text but the file holds no literal "http://" reference.
std::string escape_html(std::string_view text);

// clean_text for a Markdown table cell: newlines as spaces, | ` * _ [ ] < > & \ and ~ neutralized
// (backslash or character reference), and "://" as "[:]//", so a cell can neither break the table
// nor add markup, and a URL is not turned into a link.
std::string escape_markdown(std::string_view text);

// The text cut to at most `head` + `tail` code points with "… [N characters left out] …" between, on
// code point boundaries (long prompts: the head holds the instructions, the tail the question).
std::string truncate_middle(std::string_view text, std::size_t head, std::size_t tail);

}  // namespace kvgate::reports

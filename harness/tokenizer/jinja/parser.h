// Jinja's grammar (the parts chat templates use) over the lexer's tokens, with Jinja's operator
// precedence: condexpr < or < and < not < comparisons < + - < ~ < * / // % < ** < unary, then
// postfix (.attr, [item], [a:b:c], call) and filters/tests.
#pragma once
#include <string_view>

#include "harness/tokenizer/jinja/ast.h"

namespace kvgate::jinja {

// Throws kvgate::Error ("chat template line N: ...") on syntax errors and on statements outside the
// subset (extends, include, import, block, call, with).
Body parse(std::string_view source);

}  // namespace kvgate::jinja

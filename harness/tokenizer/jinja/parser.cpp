#include "harness/tokenizer/jinja/parser.h"

#include <initializer_list>

#include "harness/core/error.h"
#include "harness/tokenizer/jinja/lexer.h"

namespace kvgate::jinja {

namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Body parse_template() {
    Body body = parse_statements({});
    if (cur().type != Tok::End) fail("unexpected '" + describe(cur()) + "'");
    return body;
  }

 private:
  // ---- token helpers
  const Token& cur() const { return t_[i_]; }
  const Token& peek(std::size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool is_op(const char* op) const { return cur().type == Tok::Op && cur().value == op; }
  bool is_name(const char* n) const { return cur().type == Tok::Name && cur().value == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& tk) {
    switch (tk.type) {
      case Tok::Text: return "text";
      case Tok::VarBegin: return "{{";
      case Tok::VarEnd: return "}}";
      case Tok::BlockBegin: return "{%";
      case Tok::BlockEnd: return "%}";
      case Tok::End: return "end of template";
      default: return tk.value;
    }
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error("chat template line " + std::to_string(cur().line) + ": " + msg);
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "', got '" + describe(cur()) + "'");
  }
  void expect_name(const char* n) {
    if (!skip_name(n)) fail(std::string("expected '") + n + "', got '" + describe(cur()) + "'");
  }
  std::string expect_identifier() {
    if (cur().type != Tok::Name) fail("expected a name, got '" + describe(cur()) + "'");
    std::string v = cur().value;
    next();
    return v;
  }
  void expect_block_end() {
    if (cur().type != Tok::BlockEnd) fail("expected '%}', got '" + describe(cur()) + "'");
    next();
  }
  ExprPtr make(Expr::Kind k) const { return std::make_unique<Expr>(k, cur().line); }

  // ---- statements
  // Parses until a block starting with one of `end_names` (left unconsumed, positioned at its name).
  Body parse_statements(std::initializer_list<const char*> end_names) {
    Body body;
    for (;;) {
      const Token& tk = cur();
      if (tk.type == Tok::End) {
        if (end_names.size()) {
          std::string names;
          for (const char* e : end_names) names += (names.empty() ? "'" : " or '") + std::string(e) + "'";
          fail("unexpected end of template, expected " + names);
        }
        return body;
      }
      if (tk.type == Tok::Text) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::Text, tk.line);
        s->text = tk.value;
        body.push_back(std::move(s));
        next();
        continue;
      }
      if (tk.type == Tok::VarBegin) {
        next();
        auto s = std::make_unique<Stmt>(Stmt::Kind::Print, tk.line);
        s->expr = parse_tuple(true, {});
        if (cur().type != Tok::VarEnd) fail("expected '}}', got '" + describe(cur()) + "'");
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (tk.type == Tok::BlockBegin) {
        next();
        if (cur().type == Tok::Name)
          for (const char* e : end_names)
            if (cur().value == e) return body;
        body.push_back(parse_statement());
        continue;
      }
      fail("unexpected '" + describe(tk) + "'");
    }
  }

  // After the block's end name: consumes it and the "%}".
  void drop_end(const char* name) {
    expect_name(name);
    expect_block_end();
  }

  StmtPtr parse_statement() {
    if (cur().type != Tok::Name) fail("expected a statement name after '{%', got '" + describe(cur()) + "'");
    const std::string kw = cur().value;
    const int line = cur().line;
    next();
    if (kw == "if") return parse_if(line);
    if (kw == "for") return parse_for(line);
    if (kw == "set") return parse_set(line);
    if (kw == "macro") return parse_macro(line);
    if (kw == "break" || kw == "continue") {
      expect_block_end();
      return std::make_unique<Stmt>(kw == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, line);
    }
    if (kw == "filter") {
      auto s = std::make_unique<Stmt>(Stmt::Kind::FilterBlock, line);
      s->filter = parse_filter(nullptr, true);
      expect_block_end();
      s->body = parse_statements({"endfilter"});
      drop_end("endfilter");
      return s;
    }
    if (kw == "generation") {  // transformers' AssistantTracker: renders its body
      auto s = std::make_unique<Stmt>(Stmt::Kind::Generation, line);
      expect_block_end();
      s->body = parse_statements({"endgeneration"});
      drop_end("endgeneration");
      return s;
    }
    fail("'{% " + kw + " %}' is not supported in chat templates (kvgate supports if, for, set, macro, filter, "
         "break, continue, generation, raw)");
  }

  StmtPtr parse_if(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::If, line);
    for (;;) {
      ExprPtr test = parse_tuple(false, {});
      expect_block_end();
      Body body = parse_statements({"elif", "else", "endif"});
      s->branches.emplace_back(std::move(test), std::move(body));
      if (skip_name("elif")) continue;
      if (skip_name("else")) {
        expect_block_end();
        s->else_body = parse_statements({"endif"});
      }
      drop_end("endif");
      return s;
    }
  }

  Target parse_target(bool with_namespace, const char* stop_name) {
    Target t;
    if (with_namespace && cur().type == Tok::Name && peek().type == Tok::Op && peek().value == ".") {
      t.names.push_back(expect_identifier());
      next();
      t.ns_attr = expect_identifier();
      return t;
    }
    const bool paren = skip_op("(");
    for (;;) {
      t.names.push_back(expect_identifier());
      if (!skip_op(",")) break;
      t.tuple = true;
      if ((stop_name && is_name(stop_name)) || is_op("=") || is_op(")") || cur().type == Tok::BlockEnd) break;
    }
    if (paren) {
      expect_op(")");
      t.tuple = true;
    }
    return t;
  }

  StmtPtr parse_for(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::For, line);
    s->target = parse_target(false, "in");
    expect_name("in");
    s->expr = parse_tuple(false, {"recursive"});
    if (skip_name("if")) s->filter = parse_expression(true);
    if (skip_name("recursive")) fail("recursive loops are not supported");
    expect_block_end();
    s->body = parse_statements({"endfor", "else"});
    if (skip_name("else")) {
      expect_block_end();
      s->else_body = parse_statements({"endfor"});
    }
    drop_end("endfor");
    return s;
  }

  StmtPtr parse_set(int line) {
    Target target = parse_target(true, nullptr);
    if (skip_op("=")) {
      auto s = std::make_unique<Stmt>(Stmt::Kind::Set, line);
      s->target = std::move(target);
      s->expr = parse_tuple(true, {});
      expect_block_end();
      return s;
    }
    auto s = std::make_unique<Stmt>(Stmt::Kind::SetBlock, line);
    s->target = std::move(target);
    if (!s->target.ns_attr.empty() || s->target.names.size() != 1) fail("a block set takes one name");
    if (is_op("|")) s->filter = parse_filter(nullptr, false);
    expect_block_end();
    s->body = parse_statements({"endset"});
    drop_end("endset");
    return s;
  }

  StmtPtr parse_macro(int line) {
    auto s = std::make_unique<Stmt>(Stmt::Kind::Macro, line);
    s->text = expect_identifier();
    expect_op("(");
    while (!is_op(")")) {
      if (!s->params.empty()) expect_op(",");
      if (is_op(")")) break;
      std::string name = expect_identifier();
      ExprPtr def;
      if (skip_op("=")) def = parse_expression(true);
      s->params.emplace_back(std::move(name), std::move(def));
    }
    expect_op(")");
    expect_block_end();
    s->body = parse_statements({"endmacro"});
    drop_end("endmacro");
    return s;
  }

  // ---- expressions
  bool is_tuple_end(std::initializer_list<const char*> extra) const {
    if (cur().type == Tok::VarEnd || cur().type == Tok::BlockEnd || is_op(")")) return true;
    for (const char* e : extra)
      if (is_name(e)) return true;
    return false;
  }

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<const char*> extra_end, bool explicit_parens = false) {
    const int line = cur().line;
    std::vector<ExprPtr> args;
    bool is_tuple = false;
    for (;;) {
      if (!args.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      args.push_back(parse_expression(with_condexpr));
      if (is_op(",")) is_tuple = true;
      else break;
    }
    if (!is_tuple) {
      if (!args.empty()) return std::move(args[0]);
      if (!explicit_parens) fail("expected an expression, got '" + describe(cur()) + "'");
    }
    auto e = std::make_unique<Expr>(Expr::Kind::Tuple, line);
    e->children = std::move(args);
    return e;
  }

  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

  ExprPtr parse_condexpr() {
    ExprPtr e = parse_or();
    while (is_name("if")) {
      auto c = make(Expr::Kind::CondExpr);
      next();
      ExprPtr test = parse_or();
      ExprPtr other;
      if (skip_name("else")) other = parse_condexpr();
      c->children.push_back(std::move(test));
      c->children.push_back(std::move(e));
      c->children.push_back(std::move(other));
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(Expr::Kind k, ExprPtr a, ExprPtr b, const std::string& op = {}) {
    auto e = std::make_unique<Expr>(k, a->line);
    e->name = op;
    e->children.push_back(std::move(a));
    e->children.push_back(std::move(b));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (skip_name("or")) e = binary(Expr::Kind::Or, std::move(e), parse_and());
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (skip_name("and")) e = binary(Expr::Kind::And, std::move(e), parse_not());
    return e;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      auto e = make(Expr::Kind::Not);
      next();
      e->children.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    for (;;) {
      std::string op;
      if (cur().type == Tok::Op &&
          (cur().value == "==" || cur().value == "!=" || cur().value == "<" || cur().value == ">" ||
           cur().value == "<=" || cur().value == ">=")) {
        op = cur().value;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && peek().type == Tok::Name && peek().value == "in") {
        op = "notin";
        next();
        next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = std::make_unique<Expr>(Expr::Kind::Compare, first->line);
        cmp->children.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->children.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      const std::string op = cur().value;
      next();
      e = binary(Expr::Kind::Binary, std::move(e), parse_concat(), op);
    }
    return e;
  }
  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (skip_op("~")) e = binary(Expr::Kind::Binary, std::move(e), parse_math2(), "~");
    return e;
  }
  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = cur().value;
      next();
      e = binary(Expr::Kind::Binary, std::move(e), parse_pow(), op);
    }
    return e;
  }
  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (skip_op("**")) e = binary(Expr::Kind::Binary, std::move(e), parse_unary(true), "**");
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      e = make(is_op("-") ? Expr::Kind::Neg : Expr::Kind::Pos);
      next();
      e->children.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& tk = cur();
    if (tk.type == Tok::Name) {
      auto e = make(Expr::Kind::Const);
      if (tk.value == "true" || tk.value == "True") e->constant = Value(true);
      else if (tk.value == "false" || tk.value == "False") e->constant = Value(false);
      else if (tk.value == "none" || tk.value == "None") e->constant = Value::none();
      else {
        e->kind = Expr::Kind::Name;
        e->name = tk.value;
      }
      next();
      return e;
    }
    if (tk.type == Tok::String) {
      auto e = make(Expr::Kind::Const);
      std::string s;
      while (cur().type == Tok::String) {  // adjacent literals concatenate
        s += cur().value;
        next();
      }
      e->constant = Value(std::move(s));
      return e;
    }
    if (tk.type == Tok::Int || tk.type == Tok::Float) {
      auto e = make(Expr::Kind::Const);
      e->constant = tk.type == Tok::Int ? Value(tk.ival) : Value(tk.fval);
      next();
      return e;
    }
    if (is_op("(")) {
      next();
      ExprPtr e = parse_tuple(true, {}, true);
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      auto e = make(Expr::Kind::List);
      next();
      while (!is_op("]")) {
        if (!e->children.empty()) expect_op(",");
        if (is_op("]")) break;
        e->children.push_back(parse_expression(true));
      }
      expect_op("]");
      return e;
    }
    if (is_op("{")) {
      auto e = make(Expr::Kind::Dict);
      next();
      while (!is_op("}")) {
        if (!e->children.empty()) expect_op(",");
        if (is_op("}")) break;
        e->children.push_back(parse_expression(true));
        expect_op(":");
        e->children.push_back(parse_expression(true));
      }
      expect_op("}");
      return e;
    }
    fail("unexpected '" + describe(tk) + "'");
  }

  ExprPtr parse_postfix(ExprPtr e) {
    for (;;) {
      if (is_op(".")) {
        next();
        auto g = make(Expr::Kind::GetAttr);
        if (cur().type == Tok::Name) {
          g->name = cur().value;
        } else if (cur().type == Tok::Int) {
          g->kind = Expr::Kind::GetItem;
          auto k = make(Expr::Kind::Const);
          k->constant = Value(cur().ival);
          g->children.push_back(std::move(e));
          g->children.push_back(std::move(k));
          next();
          e = std::move(g);
          continue;
        } else {
          fail("expected an attribute name after '.'");
        }
        next();
        g->children.push_back(std::move(e));
        e = std::move(g);
      } else if (is_op("[")) {
        next();
        e = parse_subscript(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj) {
    const int line = cur().line;
    ExprPtr start;
    if (!is_op(":")) {
      start = parse_expression(true);
      if (!is_op(":")) {
        std::vector<ExprPtr> keys;
        keys.push_back(std::move(start));
        while (skip_op(",")) {
          if (is_op("]")) break;
          keys.push_back(parse_expression(true));
        }
        expect_op("]");
        auto g = std::make_unique<Expr>(Expr::Kind::GetItem, line);
        g->children.push_back(std::move(obj));
        if (keys.size() == 1) {
          g->children.push_back(std::move(keys[0]));
        } else {
          auto t = std::make_unique<Expr>(Expr::Kind::Tuple, line);
          t->children = std::move(keys);
          g->children.push_back(std::move(t));
        }
        return g;
      }
    }
    auto sl = std::make_unique<Expr>(Expr::Kind::Slice, line);
    sl->children.push_back(std::move(obj));
    sl->children.push_back(std::move(start));
    expect_op(":");
    ExprPtr stop, step;
    if (!is_op("]") && !is_op(":")) stop = parse_expression(true);
    if (skip_op(":"))
      if (!is_op("]")) step = parse_expression(true);
    expect_op("]");
    sl->children.push_back(std::move(stop));
    sl->children.push_back(std::move(step));
    return sl;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) fail("*args / **kwargs in calls are not supported");
      if (cur().type == Tok::Name && peek().type == Tok::Op && peek().value == "=") {
        std::string key = cur().value;
        next();
        next();
        e.kwargs.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!e.kwargs.empty()) fail("a positional argument follows keyword arguments");
        e.children.push_back(parse_expression(true));
      }
    }
    expect_op(")");
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto c = std::make_unique<Expr>(Expr::Kind::Call, callee->line);
    c->children.push_back(std::move(callee));
    parse_call_args(*c);
    return c;
  }

  std::string dotted_name() {
    std::string n = expect_identifier();
    while (is_op(".") && peek().type == Tok::Name) {
      next();
      n += "." + expect_identifier();
    }
    return n;
  }

  // A filter chain applied to `input` (nullptr for {% filter %} blocks).
  ExprPtr parse_filter(ExprPtr input, bool start_inline) {
    while (is_op("|") || start_inline) {
      if (!start_inline) next();
      start_inline = false;
      auto f = make(Expr::Kind::Filter);
      f->name = dotted_name();
      f->children.push_back(std::move(input));
      if (is_op("(")) parse_call_args(*f);
      input = std::move(f);
    }
    return input;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    for (;;) {
      if (is_op("|")) {
        e = parse_filter(std::move(e), false);
      } else if (is_name("is")) {
        next();
        const bool negated = skip_name("not");
        auto t = make(Expr::Kind::Test);
        t->name = dotted_name();
        t->children.push_back(std::move(e));
        if (is_op("(")) {
          parse_call_args(*t);
        } else if ((cur().type == Tok::Name || cur().type == Tok::String || cur().type == Tok::Int ||
                    cur().type == Tok::Float || is_op("(") || is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
          if (is_name("is")) fail("you cannot chain multiple tests with 'is'");
          t->children.push_back(parse_postfix(parse_primary()));
        }
        if (negated) {
          auto n = std::make_unique<Expr>(Expr::Kind::Not, t->line);
          n->children.push_back(std::move(t));
          e = std::move(n);
        } else {
          e = std::move(t);
        }
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  std::vector<Token> t_;
  std::size_t i_ = 0;
};

}  // namespace

Body parse(std::string_view source) { return Parser(lex(source)).parse_template(); }

}  // namespace kvgate::jinja

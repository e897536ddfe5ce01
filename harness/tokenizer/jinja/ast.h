// The syntax tree of a parsed template: expressions and statements as Jinja's parser builds them.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/tokenizer/jinja/value.h"

namespace kvgate::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Const, Name, GetAttr, GetItem, Slice, Call, Filter, Test, Neg, Pos, Not, Binary, And, Or, Compare,
    CondExpr, List, Tuple, Dict
  };
  Kind kind;
  int line = 0;
  Value constant;                 // Const
  std::string name;               // Name, GetAttr attribute, Filter/Test name, Binary operator
  std::vector<ExprPtr> children;  // operands, see the parser for each kind's layout
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // Call, Filter, Test
  std::vector<std::string> ops;   // Compare: operators between children
  Expr(Kind k, int l) : kind(k), line(l) {}
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// An assignment target: one name, several (tuple unpacking), or namespace.attribute.
struct Target {
  std::vector<std::string> names;
  bool tuple = false;
  std::string ns_attr;  // set: names[0].ns_attr = ...
};

struct Stmt {
  enum class Kind { Text, Print, If, For, Set, SetBlock, Macro, Break, Continue, FilterBlock, Generation };
  Kind kind;
  int line = 0;
  std::string text;                                // Text; Macro name
  ExprPtr expr;                                    // Print, Set value, For iterable
  ExprPtr filter;                                  // For's "if" clause; FilterBlock/SetBlock filter chain
  Target target;                                   // For, Set, SetBlock
  std::vector<std::pair<ExprPtr, Body>> branches;  // If: (test, body) for if and each elif
  Body body, else_body;                            // For, Macro, SetBlock, FilterBlock, Generation; else
  std::vector<std::pair<std::string, ExprPtr>> params;  // Macro parameters with defaults (nullptr: none)
  Stmt(Kind k, int l) : kind(k), line(l) {}
};

}  // namespace kvgate::jinja

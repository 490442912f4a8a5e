//===- GraphParser.cpp - Syntax trees of graph files ----------------------===//
//
// A recursive-descent parser without recursion: the grammar is flat (a file
// is a list of graphs, a graph a list of statements, a statement a call with
// name or integer arguments), so every production is a loop. See
// docs/graph-format.md.
//
//===----------------------------------------------------------------------===//
#include "compiler/GraphParser.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace llvm;
using namespace mtc;
using namespace mtc::graphfile;

namespace {

class Parser {
public:
  Parser(StringRef buffer, ParseError &error) : lex(buffer), error(error) {}

  bool parseFile(FileAST &file);

private:
  void consume() { tok = lex.next(); }

  bool fail(SrcLoc loc, std::string message) {
    error.loc = loc;
    error.message = std::move(message);
    return false;
  }

  /// "expected <what>, got '<tok>'", or the lexer's message for an invalid
  /// token, or "unexpected end of file, expected <what>".
  bool failExpected(const Twine &what) {
    if (tok.is(TokKind::Eof))
      return fail(tok.loc, ("unexpected end of file, expected " + what).str());
    if (tok.is(TokKind::Error))
      return fail(tok.loc, lex.getErrorMessage());
    return fail(tok.loc,
                ("expected " + what + ", got '" + quote(tok.text) + "'").str());
  }

  bool expect(TokKind kind, const Twine &what) {
    if (!tok.is(kind))
      return failExpected(what);
    consume();
    return true;
  }

  /// An identifier that is not a keyword, naming a `what`.
  bool parseName(Token &out, StringRef what, const Twine &expected) {
    if (!tok.is(TokKind::Identifier))
      return failExpected(expected);
    if (tok.isKeyword())
      return fail(tok.loc, "'" + tok.text.str() +
                               "' is a keyword and cannot be used as a " +
                               what.str());
    out = tok;
    consume();
    return true;
  }

  bool parseGraph(GraphAST &graph);
  bool parseType(TypeAST &type);
  bool parseDim(DimAST &dim);
  /// The value of the integer literal `tok`, which must fit in int64_t.
  bool parseInteger(int64_t &value);
  /// The value of the number literal `tok` (Integer or Float), which must be
  /// finite as a double.
  bool parseNumber(double &value);
  bool parseNode(NodeAST &node);
  bool parseReturn(GraphAST &graph);

  Lexer lex;
  Token tok;
  ParseError &error;
};

} // namespace

bool Parser::parseFile(FileAST &file) {
  consume();
  while (!tok.is(TokKind::Eof)) {
    if (!tok.isWord("graph"))
      return failExpected("'graph' at top level");
    file.graphs.emplace_back();
    if (!parseGraph(file.graphs.back()))
      return false;
  }
  if (file.graphs.empty())
    return fail(SrcLoc(), "no graph in file");
  return true;
}

bool Parser::parseGraph(GraphAST &graph) {
  consume(); // 'graph'
  if (!parseName(graph.name, "graph name", "a graph name after 'graph'"))
    return false;
  std::string gname = "'" + quote(graph.name.text) + "'";
  if (!expect(TokKind::LParen, "'(' after graph name " + gname))
    return false;

  // Parameters.
  if (tok.is(TokKind::RParen)) {
    consume();
  } else {
    while (true) {
      ParamAST param;
      if (!parseName(param.name, "parameter name", "a parameter name") ||
          !expect(TokKind::Colon, "':' and a type after parameter '" +
                                      quote(param.name.text) + "'") ||
          !parseType(param.type))
        return false;
      graph.params.push_back(std::move(param));
      if (tok.is(TokKind::Comma)) {
        consume();
        continue;
      }
      if (!expect(TokKind::RParen, "',' or ')' after parameter"))
        return false;
      break;
    }
  }

  // Results: `-> TYPE` or `-> (TYPE, ...)`.
  if (!expect(TokKind::Arrow,
              "'->' and the result types after the parameter list"))
    return false;
  if (tok.is(TokKind::LParen)) {
    consume();
    while (true) {
      graph.results.emplace_back();
      if (!parseType(graph.results.back()))
        return false;
      if (tok.is(TokKind::Comma)) {
        consume();
        continue;
      }
      if (!expect(TokKind::RParen, "',' or ')' after result type"))
        return false;
      break;
    }
  } else {
    graph.results.emplace_back();
    if (!parseType(graph.results.back()))
      return false;
  }

  if (!expect(TokKind::LBrace, "'{' to start the body of graph " + gname))
    return false;

  // Statements up to and including `return ... }`.
  while (true) {
    if (tok.isWord("return"))
      return parseReturn(graph);
    if (tok.is(TokKind::RBrace))
      return fail(tok.loc, "graph " + gname +
                               " has no 'return' statement; expected "
                               "'return' before '}'");
    if (tok.isWord("graph"))
      return fail(tok.loc, "expected 'return' and '}' to end graph " + gname +
                               " before the next 'graph'");
    if (!tok.is(TokKind::Identifier))
      return failExpected("a statement 'name = op(args)' or 'return' in "
                          "graph " +
                          gname);
    graph.nodes.emplace_back();
    if (!parseNode(graph.nodes.back()))
      return false;
  }
}

bool Parser::parseType(TypeAST &type) {
  if (!tok.is(TokKind::Identifier))
    return failExpected("a tensor type such as 'bf16[1, 4096]'");
  std::optional<DType> dtype = parseDType(tok.text);
  if (!dtype)
    return fail(tok.loc, "unknown dtype '" + quote(tok.text) +
                             "'; expected one of " + dtypeNames().str());
  type.start = tok;
  type.dtype = *dtype;
  consume();
  if (!expect(TokKind::LBracket,
              "'[' and the dimensions after dtype '" + type.start.text + "'"))
    return false;
  if (tok.is(TokKind::RBracket))
    return fail(tok.loc, "expected a dimension, got ']'; tensors have rank "
                         ">= 1 (write a scalar as '" +
                             type.start.text.str() + "[1]')");
  while (true) {
    type.dims.emplace_back();
    if (!parseDim(type.dims.back()))
      return false;
    if (tok.is(TokKind::Comma)) {
      consume();
      continue;
    }
    return expect(TokKind::RBracket, "',' or ']' after dimension");
  }
}

bool Parser::parseDim(DimAST &dim) {
  switch (tok.kind) {
  case TokKind::Identifier:
    dim.tok = tok;
    consume();
    return true;
  case TokKind::Integer: {
    int64_t value;
    if (!parseInteger(value))
      return false;
    if (value == 0)
      return fail(tok.loc, "dimension must be a positive integer, got '" +
                               quote(tok.text) + "'");
    dim.tok = tok;
    dim.value = value;
    consume();
    return true;
  }
  case TokKind::Float:
  case TokKind::BadNumber:
    return fail(tok.loc, "dimension must be a positive integer, got '" +
                             quote(tok.text) + "'");
  case TokKind::Minus: {
    SrcLoc minus = tok.loc;
    consume();
    if (tok.is(TokKind::Integer) || tok.is(TokKind::Float) ||
        tok.is(TokKind::BadNumber))
      return fail(minus, "dimension must be a positive integer, got '-" +
                             quote(tok.text) + "'");
    return fail(minus, "unexpected '-'; a dimension is a positive integer "
                       "or a symbolic name");
  }
  default:
    return failExpected("a dimension (a positive integer or a symbolic name)");
  }
}

bool Parser::parseInteger(int64_t &value) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  uint64_t v = 0;
  for (char c : tok.text) {
    uint64_t digit = c - '0';
    if (v > (kMax - digit) / 10)
      return fail(tok.loc, "integer literal '" + quote(tok.text) +
                               "' does not fit in 64 bits");
    v = v * 10 + digit;
  }
  value = static_cast<int64_t>(v);
  return true;
}

bool Parser::parseNumber(double &value) {
  if (tok.is(TokKind::Integer)) {
    int64_t v;
    if (!parseInteger(v))
      return false;
    value = double(v);
    return true;
  }
  // The lexer checked the syntax; strtod takes it whole.
  std::string text = tok.text.str();
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  if (!std::isfinite(value))
    return fail(tok.loc, "number '" + quote(tok.text) +
                             "' is out of range for a double");
  return true;
}

bool Parser::parseNode(NodeAST &node) {
  node.name = tok;
  consume();
  if (!expect(TokKind::Equal, "'=' after '" + quote(node.name.text) +
                                  "' (statements are 'name = op(args)')"))
    return false;
  if (!tok.is(TokKind::Identifier))
    return failExpected("an op name after '='");
  node.op = tok;
  consume();
  if (!expect(TokKind::LParen,
              "'(' after op name '" + quote(node.op.text) + "'"))
    return false;
  if (tok.is(TokKind::RParen)) {
    consume();
    return true;
  }
  while (true) {
    Token arg = tok;
    double value = 0;
    if (tok.is(TokKind::Minus)) {
      // A negative literal: the sign just before the number.
      SrcLoc at = tok.loc;
      const char *sign = tok.text.data();
      consume();
      if (!(tok.is(TokKind::Integer) || tok.is(TokKind::Float)) ||
          tok.text.data() != sign + 1)
        return fail(at, "unexpected '-'; an argument is a value name, a dtype "
                        "or a number (a '-' right before it)");
      arg = tok;
      arg.text = StringRef(sign, tok.text.size() + 1);
      arg.loc = at;
    }
    int64_t integer = 0;
    if (tok.is(TokKind::Integer) || tok.is(TokKind::Float)) {
      if (tok.is(TokKind::Integer) && !parseInteger(integer))
        return false;
      if (!parseNumber(value))
        return false;
      if (arg.text.front() == '-') {
        value = -value;
        integer = -integer;
      }
    } else if (tok.is(TokKind::BadNumber)) {
      return fail(tok.loc, "bad number '" + quote(tok.text) +
                               "'; a number is an integer (128) or a "
                               "float (1.5, 1e-05)");
    } else if (!tok.is(TokKind::Identifier)) {
      return failExpected("an argument (a value name, a dtype or a number)");
    }
    node.args.push_back(arg);
    node.numbers.push_back(value);
    node.ints.push_back(integer);
    consume();
    if (tok.is(TokKind::LParen))
      return fail(tok.loc, "nested op calls are not supported; assign '" +
                               quote(node.args.back().text) +
                               "(...)' to a name first");
    if (tok.is(TokKind::Comma)) {
      consume();
      continue;
    }
    return expect(TokKind::RParen, "')' after arguments");
  }
}

bool Parser::parseReturn(GraphAST &graph) {
  graph.returnTok = tok;
  consume();
  std::string gname = "'" + quote(graph.name.text) + "'";
  while (true) {
    Token value;
    if (!parseName(value, "value name", "a value name after 'return'"))
      return false;
    graph.returned.push_back(value);
    if (tok.is(TokKind::Comma)) {
      consume();
      continue;
    }
    if (tok.is(TokKind::RBrace)) {
      consume();
      return true;
    }
    if (tok.is(TokKind::Identifier))
      return fail(tok.loc, "expected '}' after the return statement, got '" +
                               quote(tok.text) +
                               "'; 'return' must be the last statement of "
                               "graph " +
                               gname);
    if (tok.is(TokKind::Eof))
      return failExpected("'}' to close graph " + gname);
    return failExpected("',' or '}' after returned value");
  }
}

bool mtc::graphfile::parseGraphFile(StringRef buffer, FileAST &file,
                                    ParseError &error) {
  Parser parser(buffer, error);
  return parser.parseFile(file);
}

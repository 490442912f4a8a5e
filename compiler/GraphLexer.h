//===- GraphLexer.h - Tokens of graph files ---------------------*- C++ -*-===//
//
// Splits a graph file (docs/graph-format.md) into tokens. The lexer works in
// place on the buffer: tokens are StringRefs into it, and line and column are
// tracked incrementally, so lexing is linear in the size of the file however
// long its lines are. Invalid input becomes an Error token that carries a
// user-facing message; the parser reports it.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_GRAPHLEXER_H
#define MTC_COMPILER_GRAPHLEXER_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mtc::graphfile {

/// A 1-based line and column (in bytes) in the graph file.
struct SrcLoc {
  unsigned line = 1;
  unsigned col = 1;
};

enum class TokKind {
  Eof,
  Error,      ///< Invalid input; Lexer::getErrorMessage() says why.
  Identifier, ///< [A-Za-z_][A-Za-z0-9_]*, including the keywords.
  Integer,    ///< [0-9]+
  Float,      ///< [0-9]+ with a fraction (.[0-9]*) and/or an exponent
              ///< ([eE][+-]?[0-9]+): 1.5, 1e-05, 2.
  BadNumber,  ///< Starts with a digit but is no number: 12x, 1.2.3.
  LParen,     ///< (
  RParen,     ///< )
  LBracket,   ///< [
  RBracket,   ///< ]
  LBrace,     ///< {
  RBrace,     ///< }
  Comma,      ///< ,
  Colon,      ///< :
  Equal,      ///< =
  Arrow,      ///< ->
  Minus,      ///< - (a negative literal argument, or an error)
};

struct Token {
  TokKind kind = TokKind::Eof;
  /// The token's bytes in the buffer (empty for Eof).
  llvm::StringRef text;
  SrcLoc loc;

  bool is(TokKind k) const { return kind == k; }
  /// True for an identifier spelled `word`.
  bool isWord(llvm::StringRef word) const {
    return kind == TokKind::Identifier && text == word;
  }
  bool isKeyword() const { return isWord("graph") || isWord("return"); }
};

/// Quotes `text` for a diagnostic: printable ASCII is kept, other bytes are
/// escaped as \xNN, and long text is cut to its first `maxLen` bytes followed
/// by "...". The result never holds a non-printable byte.
std::string quote(llvm::StringRef text, size_t maxLen = 40);

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer)
      : buf(buffer), cur(buffer.begin()), lineStart(buffer.begin()) {}

  /// Lexes the next token. After Eof or Error, keeps returning that token.
  Token next();

  /// Why the last Error token was produced.
  const std::string &getErrorMessage() const { return errorMessage; }

private:
  SrcLoc locOf(const char *p) const;
  Token make(TokKind kind, const char *start, const char *end);
  Token error(const char *at, std::string message);
  /// Skips whitespace and comments; returns false (with `errTok` set) on an
  /// invalid byte.
  bool skipTrivia(Token &errTok);

  llvm::StringRef buf;
  const char *cur;
  /// Start of the current line and its 1-based number.
  const char *lineStart;
  unsigned line = 1;
  bool done = false;
  Token last;
  std::string errorMessage;
};

} // namespace mtc::graphfile

#endif // MTC_COMPILER_GRAPHLEXER_H

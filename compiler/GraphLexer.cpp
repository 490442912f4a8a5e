//===- GraphLexer.cpp - Tokens of graph files -----------------------------===//
//
// See GraphLexer.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/GraphLexer.h"

#include "llvm/ADT/StringExtras.h"

#include <climits>

using namespace llvm;
using namespace mtc::graphfile;

std::string mtc::graphfile::quote(StringRef text, size_t maxLen) {
  std::string out;
  StringRef shown = text.take_front(maxLen);
  out.reserve(shown.size() + 5);
  for (char c : shown) {
    auto byte = static_cast<unsigned char>(c);
    if (isPrint(c)) {
      out.push_back(c);
      continue;
    }
    out += "\\x";
    out.push_back(hexdigit(byte >> 4, /*LowerCase=*/true));
    out.push_back(hexdigit(byte & 0xf, /*LowerCase=*/true));
  }
  if (text.size() > maxLen)
    out += "...";
  return out;
}

namespace {
bool isIdentStart(char c) { return isAlpha(c) || c == '_'; }
bool isIdentChar(char c) { return isAlnum(c) || c == '_'; }

/// Integer for [0-9]+; Float for digits with a fraction (.[0-9]*) and/or an
/// exponent ([eE][+-]?[0-9]+); BadNumber for any other word that starts
/// with a digit.
TokKind numberKind(StringRef word) {
  size_t i = 0, n = word.size();
  auto digits = [&] {
    size_t from = i;
    while (i < n && isDigit(word[i]))
      ++i;
    return i > from;
  };
  digits();
  if (i == n)
    return TokKind::Integer;
  bool fraction = false, exponent = false;
  if (word[i] == '.') {
    ++i;
    digits();
    fraction = true;
  }
  if (i < n && (word[i] == 'e' || word[i] == 'E')) {
    ++i;
    if (i < n && (word[i] == '+' || word[i] == '-'))
      ++i;
    if (!digits())
      return TokKind::BadNumber;
    exponent = true;
  }
  return i == n && (fraction || exponent) ? TokKind::Float : TokKind::BadNumber;
}
} // namespace

SrcLoc Lexer::locOf(const char *p) const {
  SrcLoc loc;
  loc.line = line;
  size_t col = static_cast<size_t>(p - lineStart) + 1;
  loc.col = col > UINT_MAX ? UINT_MAX : static_cast<unsigned>(col);
  return loc;
}

Token Lexer::make(TokKind kind, const char *start, const char *end) {
  Token tok;
  tok.kind = kind;
  tok.text = StringRef(start, end - start);
  tok.loc = locOf(start);
  return tok;
}

Token Lexer::error(const char *at, std::string message) {
  errorMessage = std::move(message);
  return make(TokKind::Error, at, at + 1);
}

/// The message for a byte that may not appear where it is.
static std::string badByteMessage(char c, bool inComment) {
  auto byte = static_cast<unsigned char>(c);
  std::string q = "'" + quote(StringRef(&c, 1)) + "'";
  if (byte == 0)
    return "unexpected NUL byte " + q + "; graph files are text";
  if (byte < 0x20 || byte == 0x7f)
    return "unexpected control character " + q +
           (inComment ? " in comment" : "") + "; graph files are text";
  if (byte >= 0x80)
    return "unexpected non-ASCII byte " + q +
           "; only comments may hold non-ASCII text";
  if (c == '%')
    return "unexpected character " + q +
           "; value names are written "
           "without '%'";
  if (c == ';')
    return "unexpected character " + q + "; statements need no terminator";
  return "unexpected character " + q;
}

bool Lexer::skipTrivia(Token &errTok) {
  const char *end = buf.end();
  while (cur != end) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cur;
      continue;
    }
    if (c == '\n') {
      ++cur;
      ++line;
      lineStart = cur;
      continue;
    }
    if (c != '#')
      return true;
    // A comment runs to the end of the line. Any text may be in it (UTF-8
    // included) except NUL and control characters other than tab and CR.
    for (++cur; cur != end && *cur != '\n'; ++cur) {
      auto byte = static_cast<unsigned char>(*cur);
      if ((byte < 0x20 && byte != '\t' && byte != '\r') || byte == 0x7f) {
        errTok = error(cur, badByteMessage(*cur, /*inComment=*/true));
        return false;
      }
    }
  }
  return true;
}

Token Lexer::next() {
  if (done)
    return last;
  Token tok;
  if (!skipTrivia(tok)) {
    done = true;
    last = tok;
    return tok;
  }
  const char *end = buf.end();
  const char *start = cur;
  if (cur == end) {
    done = true;
    last = make(TokKind::Eof, cur, cur);
    return last;
  }
  char c = *cur++;
  if (isIdentStart(c)) {
    while (cur != end && isIdentChar(*cur))
      ++cur;
    return make(TokKind::Identifier, start, cur);
  }
  if (isDigit(c)) {
    // Take the whole word so that `12x` is reported as one bad number
    // instead of a number followed by a confusing token; an exponent's sign
    // belongs to the word too (1e-05).
    while (cur != end && (isIdentChar(*cur) || *cur == '.' ||
                          ((*cur == '-' || *cur == '+') &&
                           (cur[-1] == 'e' || cur[-1] == 'E') &&
                           cur + 1 != end && isDigit(cur[1]))))
      ++cur;
    return make(numberKind(StringRef(start, cur - start)), start, cur);
  }
  switch (c) {
  case '(':
    return make(TokKind::LParen, start, cur);
  case ')':
    return make(TokKind::RParen, start, cur);
  case '[':
    return make(TokKind::LBracket, start, cur);
  case ']':
    return make(TokKind::RBracket, start, cur);
  case '{':
    return make(TokKind::LBrace, start, cur);
  case '}':
    return make(TokKind::RBrace, start, cur);
  case ',':
    return make(TokKind::Comma, start, cur);
  case ':':
    return make(TokKind::Colon, start, cur);
  case '=':
    return make(TokKind::Equal, start, cur);
  case '-':
    if (cur != end && *cur == '>') {
      ++cur;
      return make(TokKind::Arrow, start, cur);
    }
    return make(TokKind::Minus, start, cur);
  default:
    break;
  }
  done = true;
  last = error(start, badByteMessage(c, /*inComment=*/false));
  return last;
}

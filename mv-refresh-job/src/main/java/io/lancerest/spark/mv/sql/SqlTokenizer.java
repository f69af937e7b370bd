package io.lancerest.spark.mv.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a statement into tokens with their offsets, just enough to recognise the
 * materialized-view statements: words, `quoted` identifiers, 'string' literals, numbers and
 * single-character symbols. Comments ({@code --}, {@code /* *&#47;}) and whitespace are skipped.
 * The embedded SELECT is not tokenised for meaning: it is handed to Spark's own parser.
 */
final class SqlTokenizer {
  enum Type { WORD, QUOTED_IDENT, STRING, NUMBER, SYMBOL, EOF }

  /** A token; {@code start}/{@code end} are offsets in the statement text. */
  record Token(Type type, String text, int start, int end) {
    boolean isWord(String w) {
      return type == Type.WORD && text.equalsIgnoreCase(w);
    }

    boolean isSymbol(char c) {
      return type == Type.SYMBOL && text.length() == 1 && text.charAt(0) == c;
    }

    /** How the token is shown in an error. */
    String display() {
      return type == Type.EOF ? "end of input" : "'" + text + "'";
    }
  }

  private SqlTokenizer() {}

  static List<Token> tokenize(String sql) {
    List<Token> out = new ArrayList<>();
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int close = sql.indexOf("*/", i + 2);
        if (close < 0) {
          throw new MaterializedViewSqlException("Unclosed /* comment", sql, i);
        }
        i = close + 2;
      } else if (c == '\'' || c == '"') {
        int start = i;
        StringBuilder sb = new StringBuilder();
        i++;
        while (true) {
          if (i >= n) {
            throw new MaterializedViewSqlException("Unclosed string literal", sql, start);
          }
          char d = sql.charAt(i);
          if (d == '\\' && i + 1 < n) {
            sb.append(unescape(sql.charAt(i + 1)));
            i += 2;
          } else if (d == c) {
            if (i + 1 < n && sql.charAt(i + 1) == c) { // '' inside '...'
              sb.append(c);
              i += 2;
            } else {
              i++;
              break;
            }
          } else {
            sb.append(d);
            i++;
          }
        }
        out.add(new Token(Type.STRING, sb.toString(), start, i));
      } else if (c == '`') {
        int start = i;
        StringBuilder sb = new StringBuilder();
        i++;
        while (true) {
          if (i >= n) {
            throw new MaterializedViewSqlException("Unclosed `quoted identifier`", sql, start);
          }
          char d = sql.charAt(i);
          if (d == '`') {
            if (i + 1 < n && sql.charAt(i + 1) == '`') {
              sb.append('`');
              i += 2;
              continue;
            }
            i++;
            break;
          }
          sb.append(d);
          i++;
        }
        out.add(new Token(Type.QUOTED_IDENT, sb.toString(), start, i));
      } else if (Character.isDigit(c)) {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
          i++;
        }
        out.add(new Token(Type.NUMBER, sql.substring(start, i), start, i));
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
          i++;
        }
        out.add(new Token(Type.WORD, sql.substring(start, i), start, i));
      } else {
        out.add(new Token(Type.SYMBOL, String.valueOf(c), i, i + 1));
        i++;
      }
    }
    out.add(new Token(Type.EOF, "", n, n));
    return out;
  }

  private static char unescape(char c) {
    return switch (c) {
      case 'n' -> '\n';
      case 't' -> '\t';
      case 'r' -> '\r';
      case '0' -> '\0';
      default -> c;
    };
  }
}

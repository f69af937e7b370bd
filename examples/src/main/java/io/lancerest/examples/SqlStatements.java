package io.lancerest.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Reads SQL statements one at a time from text: each ends with {@code ;} (the last one may also
 * end with the input), may span lines, and may hold {@code -- line comments} (dropped) and
 * block comments between slash-star and star-slash (kept inside a statement, so that hints
 * reach Spark). A {@code ;} or {@code --}
 * inside a {@code 'string'}, {@code "string"} or {@code `identifier`} is part of it; backslash
 * escapes inside strings are honoured as Spark's parser does. Lines are read only as far as the
 * next statement needs, so typed input runs statement by statement.
 */
final class SqlStatements {
  /** A statement and the line (1-based) of the input it starts on. */
  record Statement(String text, int line) {}

  private final BufferedReader in;
  private final PrintStream prompt;
  private final Deque<Statement> ready = new ArrayDeque<>();
  private final StringBuilder current = new StringBuilder();
  private int lineNo;
  private int startLine;
  private boolean hasContent;
  private char quote;
  private boolean inBlockComment;
  private boolean keepComment;
  private boolean eof;

  /** {@code prompt}: where to print {@code sql>} before each line is read, or null for none. */
  SqlStatements(BufferedReader in, PrintStream prompt) {
    this.in = in;
    this.prompt = prompt;
  }

  /** The next statement, or null at the end of the input. */
  Statement next() throws IOException {
    while (ready.isEmpty() && !eof) {
      if (prompt != null) {
        prompt.print(hasContent || quote != 0 || inBlockComment ? "   > " : "sql> ");
        prompt.flush();
      }
      String line = in.readLine();
      if (line == null) {
        eof = true;
        emit();
      } else {
        lineNo++;
        scan(line);
      }
    }
    return ready.poll();
  }

  private void scan(String line) {
    int n = line.length();
    int i = 0;
    while (i < n) {
      char c = line.charAt(i);
      char next = i + 1 < n ? line.charAt(i + 1) : 0;
      if (inBlockComment) {
        boolean end = c == '*' && next == '/';
        if (keepComment) {
          current.append(end ? "*/" : String.valueOf(c));
        }
        if (end) {
          inBlockComment = false;
          i++;
        }
      } else if (quote != 0) {
        current.append(c);
        if (c == '\\' && quote != '`' && i + 1 < n) {
          current.append(next);
          i++;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '-' && next == '-') {
        break;
      } else if (c == '/' && next == '*') {
        // Kept inside a statement (hints: SELECT /*+ BROADCAST(t) */ ...), dropped before one.
        keepComment = hasContent;
        if (keepComment) {
          current.append("/*");
        }
        inBlockComment = true;
        i++;
      } else if (c == ';') {
        emit();
      } else {
        if (!Character.isWhitespace(c) && !hasContent) {
          hasContent = true;
          startLine = lineNo;
        }
        if (c == '\'' || c == '"' || c == '`') {
          quote = c;
        }
        current.append(c);
      }
      i++;
    }
    if (quote == 0 && !inBlockComment) {
      // e.g. the spaces before a dropped comment; inside a string they are kept
      while (current.length() > 0 && Character.isWhitespace(current.charAt(current.length() - 1))) {
        current.setLength(current.length() - 1);
      }
    }
    if (current.length() > 0) {
      current.append('\n');
    }
  }

  private void emit() {
    if (hasContent) {
      ready.add(new Statement(current.toString().strip(), startLine));
    }
    current.setLength(0);
    hasContent = false;
    quote = 0;
    inBlockComment = false;
  }
}

package io.lancerest.client;

import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.spec.Operation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Follows {@code page_token} to the end, lazily: the next page is fetched only when the items of
 * the current one are used up. A token the server sends twice stops iteration with an error
 * instead of looping forever: an {@link InvalidResponseException}, as for any other answer that
 * breaks the spec.
 */
public final class Pages {
  private Pages() {}

  /** Streams every item of every page. {@code fetch} takes the token (null for the first page). */
  public static <P, T> Stream<T> stream(
      Function<String, P> fetch,
      Function<P, ? extends Collection<T>> items,
      Function<P, String> nextToken) {
    return stream(null, null, fetch, items, nextToken);
  }

  /**
   * As {@link #stream(Function, Function, Function)}, naming the listing operation and the
   * identifier listed in the error raised for a repeated token.
   */
  public static <P, T> Stream<T> stream(
      Operation operation,
      List<String> listed,
      Function<String, P> fetch,
      Function<P, ? extends Collection<T>> items,
      Function<P, String> nextToken) {
    Iterator<T> it = new Iterator<>() {
      private Iterator<T> current = null;
      private String token = null;
      private boolean last = false;
      private final Set<String> seen = new HashSet<>();

      @Override
      public boolean hasNext() {
        while (current == null || !current.hasNext()) {
          if (last) {
            return false;
          }
          P page = fetch.apply(token);
          Collection<T> got = items.apply(page);
          current = got == null ? List.<T>of().iterator() : got.iterator();
          String next = nextToken.apply(page);
          if (next == null || next.isEmpty()) {
            last = true;
          } else if (!seen.add(next)) {
            throw repeatedToken(operation, listed, next);
          } else {
            token = next;
          }
        }
        return true;
      }

      @Override
      public T next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return current.next();
      }
    };
    return StreamSupport.stream(
        Spliterators.spliteratorUnknownSize(it, Spliterator.ORDERED), false);
  }

  private static InvalidResponseException repeatedToken(
      Operation operation, List<String> listed, String token) {
    return new InvalidResponseException(new ErrorDetails(
        "the server sent page token '" + token + "' a second time, so the listing would never "
            + "end; stopped",
        "This is a bug of the REST namespace server; report it to its operator",
        null, 0, operation, listed == null ? null : Identifiers.display(listed), null, null),
        null);
  }

  /** Every item of every page, collected. */
  public static <P, T> List<T> all(
      Function<String, P> fetch,
      Function<P, ? extends Collection<T>> items,
      Function<P, String> nextToken) {
    return all(null, null, fetch, items, nextToken);
  }

  /** Every item of every page, collected; errors name {@code operation} and {@code listed}. */
  public static <P, T> List<T> all(
      Operation operation,
      List<String> listed,
      Function<String, P> fetch,
      Function<P, ? extends Collection<T>> items,
      Function<P, String> nextToken) {
    List<T> out = new ArrayList<>();
    stream(operation, listed, fetch, items, nextToken).forEach(out::add);
    return out;
  }
}

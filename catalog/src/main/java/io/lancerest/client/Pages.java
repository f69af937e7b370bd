package io.lancerest.client;

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
 * instead of looping forever.
 */
public final class Pages {
  private Pages() {}

  /** Streams every item of every page. {@code fetch} takes the token (null for the first page). */
  public static <P, T> Stream<T> stream(
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
            throw new IllegalStateException("The server returned page token '" + next
                + "' twice; stopping to avoid an endless listing");
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

  /** Every item of every page, collected. */
  public static <P, T> List<T> all(
      Function<String, P> fetch,
      Function<P, ? extends Collection<T>> items,
      Function<P, String> nextToken) {
    List<T> out = new ArrayList<>();
    stream(fetch, items, nextToken).forEach(out::add);
    return out;
  }
}

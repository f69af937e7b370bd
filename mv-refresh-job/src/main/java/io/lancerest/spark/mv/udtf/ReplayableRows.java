package io.lancerest.spark.mv.udtf;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.StructType;

/**
 * A partition's rows that can be read again for a retry without holding them in memory.
 *
 * <p>The first attempt reads the upstream iterator and copies every row it hands out to a local
 * spill file. If that attempt fails, {@link #replay()} first copies whatever it did not read,
 * then returns an iterator over the whole partition from the file. Only used when retries are
 * configured, so a plain refresh pays nothing for it.
 */
final class ReplayableRows implements AutoCloseable {
  /** Java serialization keeps back-references; resetting bounds the table it builds up. */
  private static final int RESET_EVERY = 1024;

  private final Iterator<Row> upstream;
  private final StructType schema;
  private final Path file;
  private ObjectOutputStream out;
  private long written;
  private boolean firstHandedOut;

  ReplayableRows(Iterator<Row> upstream, StructType schema) {
    this.upstream = upstream;
    this.schema = schema;
    try {
      this.file = Files.createTempFile("udtf-partition-", ".spill");
      this.out = new ObjectOutputStream(new BufferedOutputStream(Files.newOutputStream(file)));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create a spill file for UDTF retries", e);
    }
  }

  /** The rows for the first attempt: upstream, copied to the spill file as they are read. */
  Iterator<Row> first() {
    if (firstHandedOut) {
      throw new IllegalStateException("first() called twice");
    }
    firstHandedOut = true;
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return upstream.hasNext();
      }

      @Override
      public Row next() {
        Row r = upstream.next();
        spill(r);
        return r;
      }
    };
  }

  /** The whole partition again, for the next attempt (callable once per retry). */
  Iterator<Row> replay() {
    try {
      if (out != null) {
        while (upstream.hasNext()) {
          spill(upstream.next());
        }
        out.close();
        out = null;
      }
      ObjectInputStream in = new ObjectInputStream(
          new BufferedInputStream(Files.newInputStream(file)));
      return new Iterator<>() {
        private long read;

        @Override
        public boolean hasNext() {
          if (read >= written) {
            try {
              in.close();
            } catch (IOException ignored) {
              // reading is over; nothing to report
            }
            return false;
          }
          return true;
        }

        @Override
        public Row next() {
          if (!hasNext()) {
            throw new NoSuchElementException();
          }
          try {
            Object[] values = (Object[]) in.readObject();
            read++;
            return new GenericRowWithSchema(values, schema);
          } catch (EOFException e) {
            throw new IllegalStateException("spill file " + file + " ended early", e);
          } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("cannot read spill file " + file + ": " + e, e);
          }
        }
      };
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot replay spill file " + file, e);
    }
  }

  private void spill(Row r) {
    try {
      Object[] values = new Object[r.length()];
      for (int i = 0; i < values.length; i++) {
        values[i] = r.get(i);
      }
      out.writeObject(values);
      if (++written % RESET_EVERY == 0) {
        out.reset();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot spill a row for UDTF retries to " + file, e);
    }
  }

  @Override
  public void close() {
    try {
      if (out != null) {
        out.close();
      }
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove spill file " + file, e);
    }
  }
}

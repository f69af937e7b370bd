package io.lancerest.client.internal;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.Map;

/**
 * Returns a copy of a response record with its trailing {@code context} component replaced.
 *
 * <p>Why: a response is decoded straight from the body bytes, and the response headers (which
 * the record carries as {@code context}) are added afterwards, which is much cheaper per call
 * than going through a JSON tree to splice them in before decoding (docs/benchmarks.md).
 */
public final class RecordContext {
  private static final ClassValue<Copier> COPIERS = new ClassValue<>() {
    @Override
    protected Copier computeValue(Class<?> type) {
      return Copier.of(type);
    }
  };

  private RecordContext() {}

  /** Whether {@code type} is a record whose last component is {@code Map context}. */
  public static boolean supports(Class<?> type) {
    return COPIERS.get(type) != null;
  }

  /** {@code value} with {@code context} as its context; {@code value} must be supported. */
  public static <T> T withContext(T value, Map<String, String> context) {
    Copier c = COPIERS.get(value.getClass());
    if (c == null) {
      throw new IllegalArgumentException(value.getClass() + " has no trailing context component");
    }
    return c.copy(value, context);
  }

  private record Copier(Method[] accessors, Constructor<?> canonical) {
    static Copier of(Class<?> type) {
      if (!type.isRecord()) {
        return null;
      }
      RecordComponent[] rc = type.getRecordComponents();
      if (rc.length == 0 || !rc[rc.length - 1].getName().equals("context")
          || rc[rc.length - 1].getType() != Map.class) {
        return null;
      }
      Class<?>[] types = new Class<?>[rc.length];
      Method[] accessors = new Method[rc.length];
      for (int i = 0; i < rc.length; i++) {
        types[i] = rc[i].getType();
        accessors[i] = rc[i].getAccessor();
      }
      try {
        return new Copier(accessors, type.getDeclaredConstructor(types));
      } catch (NoSuchMethodException e) {
        return null;
      }
    }

    @SuppressWarnings("unchecked")
    <T> T copy(T value, Map<String, String> context) {
      try {
        Object[] args = new Object[accessors.length];
        for (int i = 0; i < accessors.length - 1; i++) {
          args[i] = accessors[i].invoke(value);
        }
        args[accessors.length - 1] = context;
        return (T) canonical.newInstance(args);
      } catch (InvocationTargetException e) {
        Throwable t = e.getCause();
        throw t instanceof RuntimeException re ? re : new IllegalStateException(t);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot copy " + value.getClass().getName(), e);
      }
    }
  }
}

package io.lancerest.client;

import io.lancerest.client.model.Identity;
import io.lancerest.client.model.LanceRequest;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;

/**
 * The parts of a wire model that travel outside its JSON body: a request's {@code id} (the path),
 * {@code identity} and {@code context} (headers), and a response's {@code context} (filled from
 * the response headers).
 *
 * <p>Why reflection: the models are generated from the spec, one plain bean per schema, and share
 * no interface; but every request schema of the spec has {@code id}, {@code identity} and
 * {@code context}, and every response schema {@code context}. The few hand-written requests of
 * this project's own routes implement {@link LanceRequest} instead. Lookups are cached per class.
 */
final class ModelParts {
  private static final ClassValue<Accessors> ACCESSORS = new ClassValue<>() {
    @Override
    protected Accessors computeValue(Class<?> type) {
      return new Accessors(method(type, "getId"), method(type, "getIdentity"),
          method(type, "getContext"), method(type, "setContext", Map.class));
    }
  };

  private ModelParts() {}

  /** The request's identifier, or null (also for a model without one). */
  @SuppressWarnings("unchecked")
  public static List<String> id(Object request) {
    if (request instanceof LanceRequest r) {
      return r.id();
    }
    return (List<String>) invoke(ACCESSORS.get(request.getClass()).getId, request);
  }

  /** The request's per-call identity, or null. */
  public static Identity identity(Object request) {
    if (request instanceof LanceRequest r) {
      return r.identity();
    }
    return (Identity) invoke(ACCESSORS.get(request.getClass()).getIdentity, request);
  }

  /** The request's per-call context, or null. */
  @SuppressWarnings("unchecked")
  public static Map<String, String> context(Object request) {
    if (request instanceof LanceRequest r) {
      return r.context();
    }
    return (Map<String, String>) invoke(ACCESSORS.get(request.getClass()).getContext, request);
  }

  /** Sets a response's context; a model without one (this project's own routes) is unchanged. */
  public static <T> T withContext(T response, Map<String, String> context) {
    Method set = ACCESSORS.get(response.getClass()).setContext;
    if (set != null) {
      invoke(set, response, context);
    }
    return response;
  }

  private record Accessors(Method getId, Method getIdentity, Method getContext,
      Method setContext) {}

  private static Method method(Class<?> type, String name, Class<?>... params) {
    try {
      return type.getMethod(name, params);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }

  private static Object invoke(Method m, Object target, Object... args) {
    if (m == null) {
      return null;
    }
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      Throwable t = e.getCause();
      throw t instanceof RuntimeException re ? re : new IllegalStateException(t);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read " + m + " of a wire model", e);
    }
  }
}

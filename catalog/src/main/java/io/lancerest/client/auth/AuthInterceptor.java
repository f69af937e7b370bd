package io.lancerest.client.auth;

import io.lancerest.client.spec.Operation;
import java.util.Map;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Adds credentials to every request; on a 401, refreshes them once and sends it again. */
public final class AuthInterceptor implements Interceptor {
  private static final Logger LOG = LoggerFactory.getLogger("io.lancerest.client.http");
  private final AuthManager auth;

  public AuthInterceptor(AuthManager auth) {
    this.auth = auth;
  }

  @Override
  public Response intercept(Chain chain) throws java.io.IOException {
    Request original = chain.request();
    Request sent = withAuth(original);
    Response response = chain.proceed(sent);
    // A per-call identity that was refused is the caller's to fix: refreshing the catalog's
    // own credentials would not change what is sent.
    boolean ownCredentials = original.header("Authorization") == null;
    if (response.code() == 401 && ownCredentials
        && auth.refreshAfterUnauthorized(sent.header("Authorization"))) {
      response.close();
      LOG.debug("{}: 401, credentials refreshed, sending once more",
          original.tag(Operation.class));
      return chain.proceed(withAuth(original));
    }
    return response;
  }

  private Request withAuth(Request request) {
    Map<String, String> h = auth.headers();
    if (h.isEmpty()) {
      return request;
    }
    Request.Builder b = request.newBuilder();
    // A per-call identity (context api_key / auth_token) takes precedence over the catalog's.
    h.forEach((k, v) -> {
      if (request.header(k) == null) {
        b.header(k, v);
      }
    });
    return b.build();
  }
}

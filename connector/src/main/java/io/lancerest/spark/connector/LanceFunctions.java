package io.lancerest.spark.connector;

import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.lance.spark.function.LanceFragmentIdWithDefaultFunction;

/**
 * The functions a catalog handing out lance-spark tables must serve as a {@code FunctionCatalog}.
 *
 * <p>lance-spark's writer asks Spark to cluster rows by {@code lance_fragment_or_rand(_fragid)},
 * and Spark resolves that name through the table's own catalog. Without it every INSERT fails
 * with "lance_fragment_or_rand(_fragid) is not currently supported". The function is addressed
 * without a namespace, as lance-spark's own catalog does.
 */
public final class LanceFunctions {

  /** {@code lance_fragment_or_rand}. */
  public static final String FRAGMENT_OR_RAND = LanceFragmentIdWithDefaultFunction.NAME;

  private static final Identifier FRAGMENT_OR_RAND_ID =
      Identifier.of(new String[0], FRAGMENT_OR_RAND);

  private LanceFunctions() {}

  /** For {@code FunctionCatalog.listFunctions}: the function lives in the root namespace only. */
  public static Identifier[] listFunctions(String[] namespace) {
    return namespace == null || namespace.length == 0
        ? new Identifier[] {FRAGMENT_OR_RAND_ID}
        : new Identifier[0];
  }

  /** Whether {@code ident} names a function served here (name matched case-insensitively). */
  public static boolean isFunction(Identifier ident) {
    return ident.namespace().length == 0 && FRAGMENT_OR_RAND.equalsIgnoreCase(ident.name());
  }

  /** For {@code FunctionCatalog.loadFunction}. */
  public static UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    if (!isFunction(ident)) {
      throw new NoSuchFunctionException(ident);
    }
    return new LanceFragmentIdWithDefaultFunction();
  }
}

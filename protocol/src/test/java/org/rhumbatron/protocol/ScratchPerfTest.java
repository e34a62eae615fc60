package org.rhumbatron.protocol;
import com.fasterxml.jackson.databind.*;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
class ScratchPerfTest {
  interface R { Object run() throws Exception; }
  static void time(String name, R r) throws Exception { for (int i=0;i<3000;i++) r.run(); long t=System.nanoTime(); for (int i=0;i<5000;i++) r.run(); System.err.printf("%s %d us%n", name, (System.nanoTime()-t)/5000/1000); }
  @Test void perf() throws Exception {
    EnvelopeCodec codec = new EnvelopeCodec();
    Event e = Samples.event(EventType.TASK_COMPLETED);
    byte[] b = codec.encodeEvent(e);
    ObjectMapper m = new ObjectMapper();
    ObjectNode tree = (ObjectNode) m.readTree(b);
    for (int round=0; round<2; round++) {
    time("decode", () -> codec.decodeEvent(b));
    time("parse", () -> m.readTree(b));
    time("validate parsed", () -> Schemas.EVENT.validate(tree));
    time("validate written", () -> Schemas.EVENT.validate(EnvelopeJson.write(e)));
    time("map", () -> EnvelopeJson.readEvent(tree));
    time("ser payload", () -> m.writeValueAsBytes(tree.get("payload")));
    }
  }
}

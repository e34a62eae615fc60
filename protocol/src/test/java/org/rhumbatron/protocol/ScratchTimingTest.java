package org.rhumbatron.protocol;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
class ScratchTimingTest {
  @Test void timing() {
    EnvelopeCodec codec = new EnvelopeCodec(1024);
    for (int r = 0; r < 3; r++) {
      long t = System.nanoTime();
      List<Event> events = EnvelopeArbitraries.events().sampleStream().limit(300).collect(Collectors.toList());
      long gen = System.nanoTime() - t; t = System.nanoTime();
      List<ObjectNode> trees = events.stream().map(e -> Samples.tree(codec.encodeEvent(e))).collect(Collectors.toList());
      long enc = System.nanoTime() - t; t = System.nanoTime();
      for (ObjectNode tree : trees) { tree.put("eventVersion", "1"); try { codec.decodeEvent(Samples.bytes(tree)); } catch (EnvelopeException e) {} }
      long bad = System.nanoTime() - t; t = System.nanoTime();
      for (ObjectNode tree : trees) { tree.remove("eventVersion"); try { codec.decodeEvent(Samples.bytes(tree)); } catch (EnvelopeException e) {} }
      long drop = System.nanoTime() - t;
      System.err.printf("per item: gen %d us, encode %d us, wrongType %d us, drop %d us%n", gen/300000, enc/300000, bad/300000, drop/300000);
    }
  }
}

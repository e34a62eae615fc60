package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.PathType;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The three envelope schemas, read once from this module's classpath resources. A compiled {@link
 * JsonSchema} is thread-safe once its validators are initialised, so every codec shares them.
 */
final class Schemas {

  static final String EVENT_RESOURCE = "schemas/event.schema.json";
  static final String COMMAND_RESOURCE = "schemas/command.schema.json";
  static final String DEAD_LETTER_RESOURCE = "schemas/dead-letter.schema.json";

  // JSON Pointer locations ("/payload") are what EnvelopeException.field() promises; format
  // assertions are off by default in draft 2020-12 and we want date-time checked.
  private static final SchemaValidatorsConfig CONFIG =
      SchemaValidatorsConfig.builder()
          .pathType(PathType.JSON_POINTER)
          .formatAssertionsEnabled(true)
          .build();

  static final JsonSchema EVENT = load(EVENT_RESOURCE);
  static final JsonSchema COMMAND = load(COMMAND_RESOURCE);
  static final JsonSchema DEAD_LETTER = load(DEAD_LETTER_RESOURCE);

  private Schemas() {}

  /** The schema document itself, e.g. for a test or an HTTP endpoint that serves it. */
  static JsonNode read(String resource, ObjectMapper mapper) {
    try (InputStream in = Schemas.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("schema resource missing from the classpath: " + resource);
      }
      return mapper.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read schema resource " + resource, e);
    }
  }

  private static JsonSchema load(String resource) {
    JsonNode document = read(resource, new ObjectMapper());
    JsonSchema schema =
        JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(document, CONFIG);
    schema.initializeValidators(); // eagerly, so concurrent first uses do not race
    return schema;
  }
}

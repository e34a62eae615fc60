package org.rhumbatron.testkit.db;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

/** The invocations of a {@link DatabaseTest}: one per {@link TestDatabase.Kind}, in its order. */
public final class EachDatabase implements TestTemplateInvocationContextProvider {

  @Override
  public boolean supportsTestTemplate(ExtensionContext context) {
    return context.getRequiredTestMethod().isAnnotationPresent(DatabaseTest.class);
  }

  @Override
  public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(
      ExtensionContext context) {
    return Arrays.stream(TestDatabase.Kind.values()).map(Invocation::new);
  }

  private record Invocation(TestDatabase.Kind kind) implements TestTemplateInvocationContext {
    @Override
    public String getDisplayName(int invocationIndex) {
      return kind.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public List<Extension> getAdditionalExtensions() {
      DatabaseExtension database = DatabaseExtension.of(kind);
      // Registered in this order, so the database exists when the fields are set.
      BeforeEachCallback fields = c -> setFields(c.getRequiredTestInstance(), database.database());
      return List.of(database, fields);
    }
  }

  /** Sets every instance field of type {@link TestDatabase}, in the class and its superclasses. */
  private static void setFields(Object instance, TestDatabase database)
      throws IllegalAccessException {
    for (Class<?> c = instance.getClass(); c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        int modifiers = f.getModifiers();
        if (f.getType() == TestDatabase.class
            && !Modifier.isStatic(modifiers)
            && !Modifier.isFinal(modifiers)) {
          f.setAccessible(true);
          f.set(instance, database);
        }
      }
    }
  }
}

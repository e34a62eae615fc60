package org.rhumbatron.testkit.db;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test method run once per database kind (SQLite, then PostgreSQL), each run with a fresh
 * database of its own: set into the test instance's {@link TestDatabase} fields before its
 * {@code @BeforeEach} methods, or declared as a method parameter. One class covers both databases.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@TestTemplate
@ExtendWith(EachDatabase.class)
public @interface DatabaseTest {}

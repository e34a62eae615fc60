package org.rhumbatron.platform.config;

/** Whether the HTTP API's reads need a credential ({@code api.reads}). */
public enum ReadAccess {
  /** Open while core listens on loopback only; a credential as soon as it listens elsewhere. */
  AUTO,
  /** Anyone who reaches the port may read. */
  OPEN,
  /** Every read needs a reader, Agent or operator credential. */
  CREDENTIAL
}

package org.rhumbatron.server;

import java.nio.file.Path;

/** Another process for {@link DataDirLockTest}: holds the lock of {@code args[0]} until killed. */
public final class DataDirLockHolder {
  private DataDirLockHolder() {}

  public static void main(String[] args) throws Exception {
    DataDirLock held = DataDirLock.acquire(Path.of(args[0]));
    System.out.println("locked " + held.file());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}

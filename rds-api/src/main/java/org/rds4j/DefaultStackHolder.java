package org.rds4j;

/** Lazily creates the JVM-wide default stack, and closes it at JVM exit. */
final class DefaultStackHolder {
    private static volatile RdsStack stack;

    private DefaultStackHolder() {
    }

    static RdsStack get() {
        RdsStack s = stack;
        if (s == null) {
            synchronized (DefaultStackHolder.class) {
                s = stack;
                if (s == null) {
                    s = RdsStack.create(RdsStackConfig.builder().name("default").build());
                    RdsStack created = s;
                    Runtime.getRuntime().addShutdownHook(new Thread(created::close, "rds4j-default-stack-close"));
                    stack = s;
                }
            }
        }
        return s;
    }
}

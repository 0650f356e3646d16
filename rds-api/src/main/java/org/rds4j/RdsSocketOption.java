package org.rds4j;

import java.net.SocketOption;
import java.util.Objects;

/** A typed RDS socket option; the constants live in {@link RdsSocketOptions}. */
public final class RdsSocketOption<T> implements SocketOption<T> {
    private final String name;
    private final Class<T> type;

    RdsSocketOption(String name, Class<T> type) {
        this.name = Objects.requireNonNull(name);
        this.type = Objects.requireNonNull(type);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Class<T> type() {
        return type;
    }

    @Override
    public String toString() {
        return name;
    }
}

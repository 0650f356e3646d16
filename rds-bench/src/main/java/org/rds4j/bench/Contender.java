package org.rds4j.bench;

/**
 * One way of moving messages between two endpoints on this machine: raw NIO, Netty, Aeron, rds4j over a transport.
 * Each is one class; a future variant (a busy-polling rds4j stack, TLS, eight socket pairs over one or eight paths)
 * is one more class added to {@link Contenders#all()}.
 */
public interface Contender {

    /** The short name used by {@code --only}, in tables and in the CSV, such as {@code rds4j-tcp}. */
    String name();

    /** One line for the report: what exactly this contender does. */
    String description();

    /**
     * Opens a fresh link able to carry messages of up to {@code maxMessageSize} bytes (and the harness's 8-byte
     * acknowledgements). The caller closes it.
     */
    Link open(int maxMessageSize) throws Exception;
}

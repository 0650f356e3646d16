package org.rds4j.bench;

/**
 * One way of moving messages between two endpoints on this machine: raw NIO, Netty, Aeron, rds4j over a transport.
 * Each is one class; a future variant is one more instance or class added to {@link Contenders#all()}:
 *
 * <ul>
 *   <li>a busy-polling rds4j stack, or TLS: {@code new Rds4jContender(transport, name, builder -> ...)}, which
 *       adjusts both stacks' {@code RdsStackConfig};
 *   <li>eight socket pairs over one path or eight: a link whose endpoint sends message <i>i</i> on pair
 *       <i>i</i> mod 8 and receives message <i>i</i> from pair <i>i</i> mod 8. Each pair keeps its own order, so
 *       the harness still sees one ordered stream and its sequence check still holds.
 * </ul>
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

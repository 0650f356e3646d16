package org.rds4j.bench;

/**
 * One way of moving messages between two endpoints on this machine: raw NIO, Netty, Aeron, rds4j over a transport.
 * Each is one class; a future variant is one more instance or class added to {@link Contenders#all()}:
 *
 * <ul>
 *   <li>a busy-polling rds4j stack, or TLS: {@code new Rds4jContender(transport, name, builder -> ...)}, which
 *       adjusts both stacks' {@code RdsStackConfig};
 *   <li>several endpoint pairs, such as eight rds4j socket pairs over one path or eight
 *       ({@link org.rds4j.bench.contenders.Rds4jContender#multipath}): a link whose {@link Link#pairs()} is above 1;
 *       the harness drives each pair with threads of its own and checks each pair's ordered stream.
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

/**
 * The rds4j command line: stress, echo, send, recv, ping and info.
 *
 * <p>The code uses only the public API, package {@code org.rds4j}. The implementation modules are required so
 * that a module-path launch ({@code java -p ... -m org.rds4j.tools/org.rds4j.tools.Main}) always has the stack and
 * both transports in its graph; the API finds the stack through {@link org.rds4j.spi.RdsStackProvider}, and
 * {@code --version} lists the transports through rds-core's transport SPI (by reflection, declared below with
 * {@code uses}). The {@code rds4j} launcher runs on the class path, where this file plays no part.
 */
module org.rds4j.tools {
    requires org.rds4j.api;
    requires org.rds4j.core;
    requires org.rds4j.transport.tcp;
    requires org.rds4j.transport.loopback;
    // rds4j info: JMX to read a JVM's stacks, the attach API to find a JVM's JMX agent by its pid.
    requires java.management;
    requires java.management.rmi;
    requires jdk.attach;
    // stress's warm-up: the process's CPU time, to tell the JIT compilers' and the collector's share.
    requires jdk.management;
    // stress's round-trip histogram: an automatic module named after its jar, which names no module of its own (the
    // compiler warns about such names in published modules; the tools are not published).
    requires HdrHistogram;

    exports org.rds4j.tools;

    // --version lists the installed transports with a ServiceLoader of rds-core's transport SPI; on the module path
    // a module may load only the services it declares.
    uses org.rds4j.core.spi.RdsTransport;
}

/** The rds4j user API: sockets, stacks, datagrams, options and the errno exceptions. */
module org.rds4j.api {
    exports org.rds4j;
    exports org.rds4j.spi;
    uses org.rds4j.spi.RdsStackProvider;
}

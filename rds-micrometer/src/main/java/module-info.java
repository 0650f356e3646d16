/** Micrometer meters for an rds4j stack: {@link org.rds4j.micrometer.RdsMetrics}. */
module org.rds4j.micrometer {
    requires transitive org.rds4j.api;
    requires transitive micrometer.core;

    exports org.rds4j.micrometer;
}

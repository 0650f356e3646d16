package org.rds4j.bench;

/**
 * The figures of one cell, one contender at one message size. Times are in nanoseconds; -1 marks a figure this JVM
 * could not measure. A failed cell has {@code error} set and no figures.
 *
 * @param messages messages of the measured throughput phase, every one checked by the receiver
 * @param nanos the throughput phase's wall time, first send to acknowledgement received
 * @param allocatedBytes bytes allocated by all threads during the throughput phase
 * @param cpuNanos process CPU time during the throughput phase
 * @param roundTrips round trips recorded in the RTT histogram
 */
public record CellResult(String contender, int size, String error, long messages, long nanos, long allocatedBytes,
        long cpuNanos, long roundTrips, long rttP50, long rttP99, long rttP999) {

    static CellResult failed(String contender, int size, String error) {
        return new CellResult(contender, size, error, 0, 0, -1, -1, 0, 0, 0, 0);
    }

    public boolean ok() {
        return error == null;
    }

    public double msgsPerSecond() {
        return nanos <= 0 ? 0 : messages * 1e9 / nanos;
    }

    /** Payload megabytes (10^6 bytes) per second. */
    public double megabytesPerSecond() {
        return msgsPerSecond() * size / 1e6;
    }

    /** Bytes allocated per message over all threads, or -1. */
    public double allocatedPerMessage() {
        return allocatedBytes < 0 || messages == 0 ? -1 : (double) allocatedBytes / messages;
    }

    /** CPU seconds of the whole process per million messages, or -1. */
    public double cpuSecondsPerMillion() {
        return cpuNanos < 0 || messages == 0 ? -1 : cpuNanos / 1e9 / (messages / 1e6);
    }
}

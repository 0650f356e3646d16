package org.rds4j;

/**
 * The direct (off-heap) memory a stack's buffers take, against its bound ({@link RdsStackConfig#offHeapBytes()}):
 * its transports' pools (what each pool holds from the operating system, used or kept for reuse) and the direct
 * payload buffers of large messages. Part of {@link RdsStackInfo}.
 *
 * @param bound the bound in bytes
 * @param inUse the bytes taken now
 * @param highWater the most bytes taken at once since the stack started, as far as the stack looked (it looks at
 *                  every pool growth it causes, every admission decision and every snapshot)
 * @param refusals how often the bound said no: a connection from a new peer refused, or a large message's buffer
 *                 taken from the heap instead
 */
public record RdsMemoryInfo(long bound, long inUse, long highWater, long refusals) {
}

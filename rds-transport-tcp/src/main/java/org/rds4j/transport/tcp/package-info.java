/**
 * The TCP transport of rds4j: each RDS path is one TCP connection to port {@code tcpPort} (16385 by default), and
 * its byte stream is exactly the kernel's: 48-byte header, payload, next header, nothing in between.
 *
 * <p>The transport moves bytes and reports connection events, nothing more. It never parses an RDS header and never
 * decides who keeps a connection: the core frames messages ({@link org.rds4j.core.spi.FrameSink}), decodes the
 * incoming stream, and accepts or refuses each incoming connection ({@link org.rds4j.core.spi.TransportHost#accept}).
 *
 * <p><b>Threading.</b> Every connection lives on one Netty event loop, and every {@link
 * org.rds4j.core.spi.ConnectionHandler} call for it runs there, one at a time, never re-entrantly. That is what lets
 * the core keep per-path state without locks, as the kernel serialises a path's send and receive work. Calls the core
 * makes from its own threads ({@code requestTransmit}, {@code close}, {@code abort}) hand work to that event loop.
 *
 * <p><b>Copies.</b> Outgoing frames are copied once, into 32 KiB direct buffers that are written as whole batches (a
 * pass's batches in one gathering write) and then used again by the same I/O thread ({@code BufferRecycler}, which
 * also keeps the buffers its channels read into): the JDK would make the same heap-to-direct copy for any heap buffer
 * it writes to a socket, so packing costs no extra copy, and it turns many small messages into few large
 * system calls. A payload of 32 KiB or more that the core lends is written from where it lies. Incoming bytes are
 * handed to the core straight out of Netty's receive buffer, without a copy; the core's decoder copies each payload
 * once, into the message it delivers, except the rest of a large payload, which the core asks to have read from the
 * socket straight into its own direct buffer ({@link org.rds4j.core.spi.ReadTarget}, {@code InPlaceReadBuf}; not
 * with TLS, whose reads are ciphertext).
 *
 * <p><b>Settings</b> ({@link org.rds4j.RdsStackConfig#property}): {@code tcp.native} ({@code "false"} forces NIO
 * even where epoll is available), {@code tcp.ioThreads} (event loop threads, default 1), {@code
 * tcp.connectTimeoutMs} (default 10000), {@code tcp.peerPort} (the port connections go to, default the stack's
 * {@code tcpPort}: lets a test put a proxy between two stacks), {@code tcp.lowWaterMark} and {@code tcp.highWaterMark} (bytes queued in the
 * transport before {@link org.rds4j.core.spi.FrameSink#isWritable()} turns false and after which it turns true
 * again; default 256 KiB and 1 MiB), {@code tcp.yieldMicros} (how long an idle epoll I/O thread keeps yielding and
 * checking for work after its last before it sleeps in {@code epoll_wait}, default 250; 0 sleeps at once; busy-poll
 * yields for ever: {@code BackoffSelectStrategy}).
 */
package org.rds4j.transport.tcp;

package org.rds4j;

/**
 * The Linux errno values that rds4j's exceptions mirror, with their numbers on Linux, so that code written against
 * the kernel's RDS sockets can map one to the other.
 */
public enum Errno {
    /** Interrupted system call: a blocking call was interrupted. */
    EINTR(4),
    /** Bad file descriptor: the socket is closed. */
    EBADF(9),
    /** Permission denied: the peer is outside the stack's allowed peers, or TLS authentication with it failed. */
    EACCES(13),
    /** Try again: a non-blocking call would have had to wait. */
    EAGAIN(11),
    /** Invalid argument. */
    EINVAL(22),
    /** Destination address required (not thrown by rds4j). */
    EDESTADDRREQ(89),
    /** Message too long for RDS or for the send buffer. */
    EMSGSIZE(90),
    /** Protocol not available: unknown option, or a transport that is not installed. */
    ENOPROTOOPT(92),
    /** Operation not supported in the socket's state. */
    EOPNOTSUPP(95),
    /** Address family not supported (not thrown by rds4j). */
    EAFNOSUPPORT(97),
    /** Address already in use. */
    EADDRINUSE(98),
    /** Cannot assign the requested address: it is not local. */
    EADDRNOTAVAIL(99),
    /** No buffer space: the destination port is congested. */
    ENOBUFS(105),
    /** Not connected: the socket is not bound. */
    ENOTCONN(107),
    /** Timed out. */
    ETIMEDOUT(110),
    /** Connection refused: the peer's stack refuses this host. */
    ECONNREFUSED(111);

    private final int linuxValue;

    Errno(int linuxValue) {
        this.linuxValue = linuxValue;
    }

    /**
     * The number Linux uses for this errno (x86-64 and most other architectures).
     *
     * @return the errno's value on Linux
     */
    public int linuxValue() {
        return linuxValue;
    }
}

package org.rds4j;

/**
 * The Linux errno values that rds4j's exceptions mirror, with their numbers on Linux, so that code written against
 * the kernel's RDS sockets can map one to the other.
 */
public enum Errno {
    EINTR(4),
    EBADF(9),
    EAGAIN(11),
    EINVAL(22),
    EDESTADDRREQ(89),
    EMSGSIZE(90),
    ENOPROTOOPT(92),
    EOPNOTSUPP(95),
    EAFNOSUPPORT(97),
    EADDRINUSE(98),
    EADDRNOTAVAIL(99),
    ENOBUFS(105),
    ENOTCONN(107),
    ETIMEDOUT(110);

    private final int linuxValue;

    Errno(int linuxValue) {
        this.linuxValue = linuxValue;
    }

    /** The number Linux uses for this errno (x86-64 and most other architectures). */
    public int linuxValue() {
        return linuxValue;
    }
}

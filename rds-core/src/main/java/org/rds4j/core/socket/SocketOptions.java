package org.rds4j.core.socket;

import org.rds4j.core.stack.CoreStack;

import java.time.Duration;
import org.rds4j.EinvalException;
import org.rds4j.EnoprotooptException;
import org.rds4j.EopnotsuppException;
import org.rds4j.RdsSocketOption;
import org.rds4j.RdsSocketOptions;
import org.rds4j.core.cong.CongestionMonitor;

/**
 * A socket's options: the kernel's {@code rds_setsockopt} and {@code rds_getsockopt} with the socket-level ones RDS
 * honours. Values that the message path reads are volatile and read without a lock; setting them is serialised.
 */
final class SocketOptions {
    /** Linux's floor for SO_SNDBUF and SO_RCVBUF after doubling (SOCK_MIN_SNDBUF, SOCK_MIN_RCVBUF on x86-64). */
    static final int MIN_SNDBUF = CoreSocket.MIN_SNDBUF;
    static final int MIN_RCVBUF = CoreSocket.MIN_RCVBUF;

    private final CoreStack stack;
    private final SendBuffer sendBuffer;
    private final ReceiveQueue receiveQueue;
    private final CongestionMonitor congestion;
    private volatile int sndbuf;
    private volatile long sendTimeoutNanos;
    private volatile long receiveTimeoutNanos;
    private volatile boolean recvErr;
    private volatile String transportName;
    private volatile boolean zeroCopy;

    SocketOptions(CoreStack stack, SendBuffer sendBuffer, ReceiveQueue receiveQueue, CongestionMonitor congestion) {
        this.stack = stack;
        this.sendBuffer = sendBuffer;
        this.receiveQueue = receiveQueue;
        this.congestion = congestion;
        this.sndbuf = stack.config().defaultSendBuffer();
    }

    long sendTimeoutNanos() {
        return sendTimeoutNanos;
    }

    long receiveTimeoutNanos() {
        return receiveTimeoutNanos;
    }

    boolean recvErr() {
        return recvErr;
    }

    boolean zeroCopy() {
        return zeroCopy;
    }

    /** The transport chosen with SO_RDS_TRANSPORT or at bind, {@code null} before either. */
    String transportName() {
        return transportName;
    }

    /** Bind chose the transport (the option's value, or the stack's default). */
    synchronized void transportChosen(String name) {
        transportName = name;
    }

    synchronized <T> void set(RdsSocketOption<T> option, T value) throws java.io.IOException {
        if (option == RdsSocketOptions.SO_SNDBUF) {
            sndbuf = bufferSize((Integer) value, MIN_SNDBUF, option);
            sendBuffer.budget(sndbuf / 2);
        } else if (option == RdsSocketOptions.SO_RCVBUF) {
            receiveQueue.rcvbuf(bufferSize((Integer) value, MIN_RCVBUF, option));
        } else if (option == RdsSocketOptions.SO_RDS_TRANSPORT) {
            if (transportName != null) {
                throw new EopnotsuppException("the transport is already " + transportName
                        + "; choose it once, before bind");
            }
            String name = (String) value;
            if (!stack.hasTransport(name)) {
                stack.transport(name);               // throws ENOPROTOOPT naming what is installed
            }
            transportName = name;
        } else if (option == RdsSocketOptions.SO_SNDTIMEO || option == RdsSocketOptions.SO_RCVTIMEO) {
            Duration d = (Duration) value;
            if (d.isNegative()) {
                throw new EinvalException(option + " cannot be negative");
            }
            if (option == RdsSocketOptions.SO_SNDTIMEO) {
                sendTimeoutNanos = saturatedNanos(d);
            } else {
                receiveTimeoutNanos = saturatedNanos(d);
            }
        } else if (option == RdsSocketOptions.RDS_CONG_MONITOR) {
            congestion.enabled((Boolean) value);
            if (!congestion.enabled()) {
                receiveQueue.clearCongestionNotify();
            }
        } else if (option == RdsSocketOptions.RDS_RECVERR) {
            recvErr = (Boolean) value;
        } else if (option == RdsSocketOptions.SO_ZEROCOPY) {
            zeroCopy = (Boolean) value;
        } else if (option == RdsSocketOptions.RDS_SEND_QUEUED) {
            throw new EinvalException(option + " is read-only");
        } else {
            throw new EnoprotooptException(option + " is not an RDS socket option");
        }
    }

    @SuppressWarnings("unchecked")
    synchronized <T> T get(RdsSocketOption<T> option) throws EnoprotooptException {
        if (option == RdsSocketOptions.SO_SNDBUF) {
            return (T) Integer.valueOf(sndbuf);
        } else if (option == RdsSocketOptions.SO_RCVBUF) {
            return (T) Integer.valueOf(receiveQueue.rcvbuf());
        } else if (option == RdsSocketOptions.SO_RDS_TRANSPORT) {
            return (T) transportName;
        } else if (option == RdsSocketOptions.SO_SNDTIMEO) {
            return (T) Duration.ofNanos(sendTimeoutNanos);
        } else if (option == RdsSocketOptions.SO_RCVTIMEO) {
            return (T) Duration.ofNanos(receiveTimeoutNanos);
        } else if (option == RdsSocketOptions.RDS_SEND_QUEUED) {
            return (T) Integer.valueOf((int) sendBuffer.queuedBytes());
        } else if (option == RdsSocketOptions.RDS_CONG_MONITOR) {
            return (T) Boolean.valueOf(congestion.enabled());
        } else if (option == RdsSocketOptions.RDS_RECVERR) {
            return (T) Boolean.valueOf(recvErr);
        } else if (option == RdsSocketOptions.SO_ZEROCOPY) {
            return (T) Boolean.valueOf(zeroCopy);
        }
        throw new EnoprotooptException(option + " is not an RDS socket option");
    }

    /** Linux's arithmetic: cap at the maximum, double, and keep above the floor. */
    private int bufferSize(int requested, int floor, RdsSocketOption<?> option) throws EinvalException {
        if (requested < 0) {
            throw new EinvalException(option + " cannot be negative");
        }
        long capped = Math.min(requested, stack.config().maxSocketBuffer());
        return (int) Math.max(capped * 2, floor);
    }

    /** A duration in nanoseconds, or Long.MAX_VALUE for one too long to count. */
    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}

package org.rds4j.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.rds4j.EagainException;
import org.rds4j.EbadfException;
import org.rds4j.EnobufsException;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;

/**
 * One rds-stress task: one RDS socket on port {@code starting_port + 1 + id} of the local address, talking to every
 * task of the peer (one flow each, to the peer's port {@code starting_port + 1 + i}). Per flow it keeps up to
 * {@code depth} requests outstanding, answers each request it receives with an ack, and checks that every message
 * is the next one expected from that peer task: sequence number (one counter per direction of a flow, requests and
 * acks alike), addresses, ports, queue index and, with {@code -v}, the payload pattern. The first mismatch ends the
 * run with a failure, as rds-stress's child exits.
 *
 * <p>The socket is non-blocking and waits in a selector, so one thread serves all flows of the task; buffers and
 * addresses are made once, so the message loop allocates nothing.
 */
final class RdsStressTask implements Runnable {
    /** Where a task reports the error that ends the run. */
    interface FailureSink {
        void failed(int task, String message);
    }

    private static final RdsSelector.ReadyHandler IGNORE_READY = (s, ops) -> { };
    private static final int PROGRESS = 1;
    private static final int BLOCKED = 2;
    private static final int RETRY_SOON = 4;

    private final int id;
    private final int depth;
    private final int reqSize;
    private final int ackSize;
    private final int startingPort;
    private final boolean verify;
    private final boolean doWork;
    private final boolean congMonitor;
    private final boolean histogram;
    private final long outlierMicros;
    private final PrintStream out;
    private final PrintStream err;
    private final RdsSocket socket;
    private final RdsSelector selector;
    private final int localAddr;
    private final int localPort;
    private final Flow[] flows;
    private final ByteBuffer sendBuf;
    private final ByteBuffer recvBuf;
    private final ByteBuffer patternBuf;
    private final RdsMessageInfo info = new RdsMessageInfo();
    private final RdsStressStats stats = new RdsStressStats();
    private final FailureSink failures;
    private final CountDownLatch closing = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile boolean closed;
    private int interest = -1;

    /** One direction pair with one peer task. */
    private static final class Flow {
        final InetSocketAddress peer;
        final int peerAddr;
        final int peerPort;
        final long[] sendNanos;
        int sendSeq;
        int recvSeq;
        int sendIndex;
        int recvIndex;
        int pending;
        int unacked;
        boolean congested;

        Flow(InetSocketAddress peer, int depth) {
            this.peer = peer;
            this.peerAddr = addressBits(peer.getAddress());
            this.peerPort = peer.getPort();
            this.sendNanos = new long[depth];
        }
    }

    /**
     * Opens and binds the task's socket; throws if the port is taken, before any traffic.
     *
     * @param local this side's address
     * @param peer the peer's address
     * @param active whether this is the side that sent the options (with {@code -o} only it sends requests)
     */
    RdsStressTask(RdsStack stack, RdsStressOptions o, int id, InetAddress local, InetAddress peer, boolean active,
            RdsStressCli.LocalFlags flags, PrintStream out, PrintStream err, FailureSink failures)
            throws IOException {
        this.id = id;
        this.depth = (int) o.reqDepth;
        this.reqSize = (int) o.reqSize;
        this.ackSize = (int) o.ackSize;
        this.startingPort = o.startingPort;
        this.verify = o.verify != 0;
        this.doWork = o.simplex == 0 || active;
        this.congMonitor = o.useCongMonitor != 0;
        this.histogram = flags.showHistogram();
        this.outlierMicros = flags.outlierMicros();
        this.out = out;
        this.err = err;
        this.failures = failures;
        this.localAddr = addressBits(local);
        this.localPort = o.startingPort + 1 + id;
        this.flows = new Flow[o.nrTasks];
        for (int i = 0; i < flows.length; i++) {
            flows[i] = new Flow(new InetSocketAddress(peer, o.startingPort + 1 + i), depth);
        }
        int max = o.maxMessage();
        this.sendBuf = ByteBuffer.allocateDirect(max);
        this.recvBuf = ByteBuffer.allocateDirect(max);
        byte[] pattern = RdsStressHeader.pattern(max);
        this.patternBuf = ByteBuffer.allocateDirect(max).put(pattern).clear();
        // The payload after the header never changes: write it once. Without -v rds-stress sends whatever its
        // buffer held; the pattern is as good as anything.
        sendBuf.position(RdsStressHeader.BYTES);
        sendBuf.put(pattern, 0, max - RdsStressHeader.BYTES).clear();

        RdsSocket s = stack.openSocket();
        try {
            // rds-stress sizes both buffers to twice the task's whole window, both ways.
            long bytes = (long) o.nrTasks * depth * (o.reqSize + o.ackSize) * 2;
            int buffer = (int) Math.min(Integer.MAX_VALUE / 2, bytes);
            setBuffer(s, RdsSocketOptions.SO_SNDBUF, buffer, id == 0);
            setBuffer(s, RdsSocketOptions.SO_RCVBUF, buffer, id == 0);
            if (congMonitor) {
                s.setOption(RdsSocketOptions.RDS_CONG_MONITOR, true);
            }
            s.configureBlocking(false);
            s.bind(new InetSocketAddress(local, localPort));
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        this.socket = s;
        this.selector = stack.openSelector();
    }

    private void setBuffer(RdsSocket s, org.rds4j.RdsSocketOption<Integer> option, int bytes, boolean warn)
            throws IOException {
        s.setOption(option, bytes);
        int got = s.getOption(option);
        if (got / 2 < bytes && warn) {
            err.printf(Locale.ROOT, "getsockopt(%s) returned %d, we wanted %d * 2%n",
                    option.name().substring(3), got, bytes);
        }
    }

    RdsStressStats stats() {
        return stats;
    }

    /** Stops sending; the task goes on receiving until {@link #close()}. */
    void stopSending() {
        stopping = true;
        selector.wakeup();
    }

    /** Ends the task: its thread returns soon after. */
    void close() {
        closed = true;
        closing.countDown();
        selector.wakeup();
        socket.close();
        selector.close();
    }

    /** Sets the start time, as a {@link System#nanoTime()} value; call before starting the thread. */
    private volatile long startNanos;

    void startAt(long nanoTime) {
        startNanos = nanoTime;
    }

    @Override
    public void run() {
        try {
            long wait = startNanos - System.nanoTime();
            if (wait > 0 && closing.await(wait, TimeUnit.NANOSECONDS)) {
                return;
            }
            while (!closed) {
                int r = receiveAll();
                if (!stopping) {
                    r |= sendAll();
                }
                if ((r & PROGRESS) == 0) {
                    int want = RdsSelector.OP_READ | ((r & BLOCKED) != 0 ? RdsSelector.OP_WRITE : 0);
                    if (want != interest) {
                        selector.register(socket, want);
                        interest = want;
                    }
                    selector.select((r & RETRY_SOON) != 0 ? Duration.ofMillis(1) : Duration.ofSeconds(1),
                            IGNORE_READY);
                }
            }
        } catch (EbadfException e) {
            if (!closed) {
                failures.failed(id, "task " + id + ": its socket was closed: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                failures.failed(id, "task " + id + ": " + e);
            }
        }
    }

    /** Reads everything queued; returns PROGRESS if anything came. */
    private int receiveAll() throws IOException {
        int r = 0;
        while (!closed) {
            recvBuf.clear();
            int got;
            try {
                got = socket.receive(recvBuf, info, RdsSocket.MSG_DONTWAIT);
            } catch (EagainException empty) {
                return r;
            }
            r = PROGRESS;
            if (info.kind() == RdsDatagram.Kind.CONGESTION_UPDATE) {
                long mask = info.congestionMask();
                for (Flow f : flows) {
                    if ((mask & (1L << (f.peerPort % 64))) != 0) {
                        f.congested = false;
                    }
                }
            } else if (info.kind() == RdsDatagram.Kind.DATA) {
                if (!received(got)) {
                    return r;
                }
            }
        }
        return r;
    }

    /** Checks and accounts one message; false once the run has failed. */
    private boolean received(int got) {
        long now = System.nanoTime();
        InetSocketAddress from = info.source();
        int task = from.getPort() - startingPort - 1;
        if (task < 0 || task >= flows.length) {
            return fail(String.format(Locale.ROOT, "received bad task index %d", task));
        }
        Flow f = flows[task];
        int length = info.length();
        if (length < RdsStressHeader.BYTES) {
            return fail(String.format(Locale.ROOT, "recvmsg() returned short data: %d", length));
        }
        int op = Byte.toUnsignedInt(recvBuf.get(RdsStressHeader.OP));
        int expectIndex;
        if (op == RdsStressHeader.OP_REQ) {
            stats.add(RdsStressStats.REQ_RX, got);
            if (length != reqSize) {
                return fail(String.format(Locale.ROOT, "req size %d, not %d", length, reqSize));
            }
            expectIndex = f.recvIndex;
        } else if (op == RdsStressHeader.OP_ACK) {
            stats.add(RdsStressStats.ACK_RX, got);
            if (length != ackSize) {
                return fail(String.format(Locale.ROOT, "ack size %d, not %d", length, ackSize));
            }
            // An ack answers the oldest request still outstanding.
            expectIndex = Math.floorMod(f.sendIndex - f.pending, depth);
        } else {
            return fail("unknown op " + op);
        }
        int fromAddr = from.getAddress().equals(f.peer.getAddress()) ? f.peerAddr : addressBits(from.getAddress());
        int seq = recvBuf.getInt(RdsStressHeader.SEQ);
        if (recvBuf.get(RdsStressHeader.RETRY) != 0 && Integer.compareUnsigned(seq, f.recvSeq) < 0) {
            // A resent message already seen (rds-stress's asynchronous-send retries): not an error.
            return true;
        }
        if (seq != f.recvSeq || recvBuf.getInt(RdsStressHeader.FROM_ADDR) != fromAddr
                || recvBuf.getInt(RdsStressHeader.TO_ADDR) != localAddr
                || Short.toUnsignedInt(recvBuf.getShort(RdsStressHeader.FROM_PORT)) != from.getPort()
                || Short.toUnsignedInt(recvBuf.getShort(RdsStressHeader.TO_PORT)) != localPort
                || Short.toUnsignedInt(recvBuf.getShort(RdsStressHeader.INDEX)) != expectIndex) {
            out.print(mismatch(f.recvSeq, fromAddr, from.getPort(), expectIndex, op));
            return fail(bogus(from));
        }
        if (verify) {
            recvBuf.limit(length).position(RdsStressHeader.BYTES);
            patternBuf.limit(length - RdsStressHeader.BYTES).position(0);
            int at = recvBuf.mismatch(patternBuf);
            if (at >= 0) {
                int total = length - RdsStressHeader.BYTES;
                int count = 0;
                for (int i = at; i < total; i++) {
                    if (recvBuf.get(RdsStressHeader.BYTES + i) != patternBuf.get(i)) {
                        count++;
                    }
                }
                out.printf(Locale.ROOT, "An incoming message has a corrupted payload at offset %d; "
                        + "%d out of %d bytes corrupted%n", at, count, total);
                return fail(bogus(from));
            }
        }
        if (op == RdsStressHeader.OP_ACK) {
            long rtt = now - f.sendNanos[expectIndex];
            stats.roundTrip(rtt, histogram);
            if (rtt / 1000 > outlierMicros) {
                err.printf(Locale.ROOT, "Found RTT = 0x%x%n", rtt / 1000);
            }
            if (f.pending > 0) {
                f.pending--;
            }
        } else {
            f.unacked++;
            f.recvIndex = (f.recvIndex + 1) % depth;
        }
        f.recvSeq++;
        return true;
    }

    private String bogus(InetSocketAddress from) {
        return String.format(Locale.ROOT, "header from %s:%d to id %d bogus", from.getAddress().getHostAddress(),
                from.getPort(), localPort);
    }

    /** The table rds-stress prints for a header that is not the one expected. */
    private String mismatch(int seq, int fromAddr, int fromPort, int index, int op) {
        ByteBuffer b = recvBuf.duplicate().clear();
        String retry = b.get(RdsStressHeader.RETRY) != 0 ? "RETRY" : "";
        StringBuilder s = new StringBuilder();
        s.append("An incoming message had a ").append(retry).append(" header which\n")
                .append("didn't contain the fields we expected:\n")
                .append("    member        expected eq             got\n");
        row(s, "seq", Integer.toUnsignedString(seq), Integer.toUnsignedString(b.getInt(RdsStressHeader.SEQ)));
        row(s, "from_addr", dotted(fromAddr), dotted(b.getInt(RdsStressHeader.FROM_ADDR)));
        row(s, "from_port", Integer.toString(fromPort),
                Integer.toString(Short.toUnsignedInt(b.getShort(RdsStressHeader.FROM_PORT))));
        row(s, "to_addr", dotted(localAddr), dotted(b.getInt(RdsStressHeader.TO_ADDR)));
        row(s, "to_port", Integer.toString(localPort),
                Integer.toString(Short.toUnsignedInt(b.getShort(RdsStressHeader.TO_PORT))));
        row(s, "index", Integer.toString(index),
                Integer.toString(Short.toUnsignedInt(b.getShort(RdsStressHeader.INDEX))));
        row(s, "op", Integer.toString(op), Integer.toString(Byte.toUnsignedInt(b.get(RdsStressHeader.OP))));
        return s.toString();
    }

    private static void row(StringBuilder s, String name, String expected, String got) {
        s.append(String.format(Locale.ROOT, "%10s %15s %s %15s%n", name, expected, expected.equals(got) ? " =" : "!=",
                got));
    }

    static String dotted(int bits) {
        return (bits >>> 24) + "." + ((bits >>> 16) & 0xff) + "." + ((bits >>> 8) & 0xff) + "." + (bits & 0xff);
    }

    private boolean fail(String message) {
        failures.failed(id, message);
        stopping = true;
        return false;
    }

    /** Sends the acks owed, then requests to fill each flow's window. */
    private int sendAll() throws IOException {
        int r = 0;
        for (Flow f : flows) {
            if (congMonitor && f.congested) {
                continue;
            }
            try {
                while (f.unacked > 0) {
                    int index = Math.floorMod(f.recvIndex - f.unacked, depth);
                    int sent = send(f, RdsStressHeader.OP_ACK, index, ackSize);
                    stats.add(RdsStressStats.ACK_TX, sent);
                    f.unacked--;
                    r |= PROGRESS;
                }
                while (doWork && f.pending < depth) {
                    long start = System.nanoTime();
                    int sent = send(f, RdsStressHeader.OP_REQ, f.sendIndex, reqSize);
                    long end = System.nanoTime();
                    f.sendNanos[f.sendIndex] = start;
                    stats.add(RdsStressStats.REQ_TX, sent);
                    stats.add(RdsStressStats.SEND_NANOS, end - start);
                    f.sendIndex = (f.sendIndex + 1) % depth;
                    f.pending++;
                    r |= PROGRESS;
                }
            } catch (EagainException full) {
                // The send buffer is full: no other flow would fare better.
                return r | BLOCKED;
            } catch (EnobufsException congested) {
                // This peer port is congested; others may not be.
                f.congested = true;
                if (!congMonitor) {
                    r |= RETRY_SOON;
                }
            }
        }
        return r;
    }

    private int send(Flow f, int op, int index, int size) throws IOException {
        sendBuf.clear().limit(size);
        RdsStressHeader.write(sendBuf, f.sendSeq, localAddr, f.peerAddr, localPort, f.peerPort, index, op);
        int sent = socket.send(sendBuf, f.peer);
        f.sendSeq++;
        return sent;
    }

    /** The four octets of an IPv4 address as a big-endian int, as the header carries them. */
    static int addressBits(InetAddress a) {
        if (!(a instanceof Inet4Address)) {
            throw new IllegalArgumentException("rds-stress speaks IPv4 only, not " + a.getHostAddress());
        }
        byte[] b = a.getAddress();
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }
}

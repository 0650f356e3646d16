package org.rds4j.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rds4j.bench.contenders.AeronContender;
import org.rds4j.bench.contenders.HandoffNioContender;
import org.rds4j.bench.contenders.NettyContender;
import org.rds4j.bench.contenders.NioContender;
import org.rds4j.bench.contenders.Rds4jContender;

/** The contenders, in table order. The first, packed raw NIO, is the reference every ratio is taken against. */
public final class Contenders {
    /** The physical reference of every ratio. */
    public static final String REFERENCE = "nio-packed";
    /** rds4j's loopback transport is compared with Aeron's in-process transport too. */
    public static final String AERON_IPC = "aeron-ipc";
    /** Blocking raw NIO with one write per message: the other round-trip reference. */
    public static final String PER_MESSAGE_REFERENCE = "nio-per-msg";
    /** rds4j's busy-poll mode is compared with raw NIO busy-spinning. */
    public static final String SPIN_REFERENCE = "nio-spin";
    /** Raw NIO with rds4j's threading, busy-polling: its RTT is given as a ratio to {@link #SPIN_REFERENCE} too. */
    public static final String HANDOFF_SPIN = "nio-handoff-spin";

    /** The multipath contenders' I/O threads: one per available processor. */
    private static final int CORES = Runtime.getRuntime().availableProcessors();
    private static final String PER_CORE = " (the available processors)";
    private static final int BIG_BUFFERS = 4 << 20;
    private static final String BIG_BUFFERS_WHY = " (the largest send buffer Linux's TCP autotuning gives the NIO"
            + " sockets by default), where the other rds4j contenders keep the default 212,992";

    private Contenders() {
    }

    /** Every contender, in the order of the table. */
    public static List<Contender> all() {
        return List.of(
                new NioContender(true),
                new NioContender(false),
                NioContender.spinning(),
                // rds4j's threading without its protocol: what the hand-offs alone cost, by default and busy-polling.
                new HandoffNioContender(false),
                new HandoffNioContender(true),
                new NettyContender(),
                new AeronContender(false),
                new AeronContender(true),
                new Rds4jContender("tcp"),
                new Rds4jContender("tcp", "rds4j-tcp-busypoll", b -> b.busyPoll(true),
                        ", busyPoll(true): receives and replies poll and write the sockets in their own threads"),
                // Without caller I/O: the I/O threads do every read and write, as on NIO, where it is off.
                new Rds4jContender("tcp", "rds4j-tcp-iothread", b -> b.property("tcp.callerIo", "false"),
                        ", tcp.callerIo=false: the I/O threads do every read and write"),
                // The I/O threads sleeping as soon as they are idle, without the default's 250 us of yielding first.
                new Rds4jContender("tcp", "rds4j-tcp-sleep", b -> b.property("tcp.yieldMicros", "0"),
                        ", tcp.yieldMicros=0: idle I/O threads sleep at once"),
                Rds4jContender.tls("rds4j-tcp-tls"),
                new Rds4jContender("loopback"),
                new Rds4jContender("loopback", "rds4j-loopback-sleep", b -> b.property("loopback.yieldMicros", "0"),
                        ", loopback.yieldMicros=0: the idle loop thread parks at once"),
                // Each stack on a loopback thread of its own, where by default the stacks of the JVM share one.
                new Rds4jContender("loopback", "rds4j-loopback-own", b -> b.property("loopback.sharedLoop", "false"),
                        ", loopback.sharedLoop=false: each stack has a loopback thread of its own"),
                // The same with 4 MiB socket buffers: as much as Linux's TCP autotuning lets the NIO and Netty
                // contenders' socket send buffers grow (tcp_wmem's default maximum), where rds4j's default is the
                // kernel RDS socket's (wmem_default, 212,992 bytes).
                Rds4jContender.socketBuffers("rds4j-tcp-4m", "tcp", BIG_BUFFERS, BIG_BUFFERS_WHY),
                Rds4jContender.socketBuffers("rds4j-loopback-4m", "loopback", BIG_BUFFERS, BIG_BUFFERS_WHY),
                // Multipath: 8 socket pairs over one TCP connection or eight, with an I/O thread per core
                // (so that the eight paths are spread over them), and with the transport's default single I/O thread.
                Rds4jContender.multipath("rds4j-tcp-8x1path", 8, 1, CORES, PER_CORE),
                Rds4jContender.multipath("rds4j-tcp-8x8paths", 8, 8, CORES, PER_CORE),
                Rds4jContender.multipath("rds4j-tcp-8x1path-1io", 8, 1, 1, " (the default)"),
                Rds4jContender.multipath("rds4j-tcp-8x8paths-1io", 8, 8, 1, " (the default)"));
    }

    /** The contenders named in {@code names} (all when empty), in table order; unknown names are an error. */
    public static List<Contender> select(List<String> names) {
        Map<String, Contender> byName = new LinkedHashMap<>();
        for (Contender c : all()) {
            byName.put(c.name(), c);
        }
        if (names.isEmpty()) {
            return new ArrayList<>(byName.values());
        }
        for (String n : names) {
            if (!byName.containsKey(n)) {
                throw new IllegalArgumentException("unknown contender '" + n + "'; known: " + byName.keySet());
            }
        }
        List<Contender> out = new ArrayList<>();
        for (Contender c : byName.values()) {
            if (names.contains(c.name())) {
                out.add(c);
            }
        }
        return out;
    }
}

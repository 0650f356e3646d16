package org.rds4j;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The settings of one {@link RdsStack}. Defaults are those of the Linux kernel's RDS where the kernel has one.
 *
 * <pre>{@code
 * RdsStack host = RdsStack.create(RdsStackConfig.builder()
 *         .name("host-b")
 *         .address(InetAddress.getByName("127.0.0.2"))
 *         .tcpPort(17000)
 *         .build());
 * }</pre>
 */
public final class RdsStackConfig {
    /** The IANA port of RDS over TCP, on which the kernel listens and connects. */
    public static final int RDS_TCP_PORT = 16385;
    /** Linux's usual {@code net.core.wmem_default} and {@code rmem_default}. */
    public static final int DEFAULT_SOCKET_BUFFER = 212_992;
    /** The share of {@link #offHeapBytes()}, in percent, from which new peers are refused. */
    public static final int OFF_HEAP_SHED_PERCENT = 75;

    private final String name;
    private final int tcpPort;
    private final String defaultTransport;
    private final Set<InetAddress> addresses;
    private final Duration reconnectMinDelay;
    private final Duration reconnectMaxDelay;
    private final Duration livenessInterval;
    private final boolean busyPoll;
    private final Duration replySpin;
    private final int paths;
    private final boolean jmx;
    private final int defaultSendBuffer;
    private final int defaultReceiveBuffer;
    private final int maxSocketBuffer;
    private final long peerReceiveBytes;
    private final long stackReceiveBytes;
    private final long offHeapBytes;
    private final List<RdsAddressPrefix> allowedPeers;
    private final int maxPeers;
    private final Duration idlePeerTimeout;
    private final Duration frameTimeout;
    private final int peerFailureThreshold;
    private final Duration unreachableTimeout;
    private final RdsTlsConfig tls;
    private final Map<String, String> properties;

    private RdsStackConfig(Builder b) {
        this.name = b.name;
        this.tcpPort = b.tcpPort;
        this.defaultTransport = b.defaultTransport;
        this.addresses = Set.copyOf(b.addresses);
        this.reconnectMinDelay = b.reconnectMinDelay;
        this.reconnectMaxDelay = b.reconnectMaxDelay;
        this.livenessInterval = b.livenessInterval;
        this.busyPoll = b.busyPoll;
        this.replySpin = b.replySpin;
        this.paths = b.paths;
        this.jmx = b.jmx;
        this.defaultSendBuffer = b.defaultSendBuffer;
        this.defaultReceiveBuffer = b.defaultReceiveBuffer;
        this.maxSocketBuffer = b.maxSocketBuffer;
        this.peerReceiveBytes = b.peerReceiveBytes;
        this.stackReceiveBytes = b.stackReceiveBytes;
        this.offHeapBytes = b.offHeapBytes;
        this.allowedPeers = List.copyOf(b.allowedPeers);
        this.maxPeers = b.maxPeers;
        this.idlePeerTimeout = b.idlePeerTimeout;
        this.frameTimeout = b.frameTimeout;
        this.peerFailureThreshold = b.peerFailureThreshold;
        this.unreachableTimeout = b.unreachableTimeout;
        this.tls = b.tls;
        this.properties = Map.copyOf(b.properties);
    }

    /**
     * Starts a configuration with the kernel's defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A name for logs and thread names.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The TCP port the TCP transport listens on and connects to; 16385 unless changed.
     *
     * @return the TCP port
     */
    public int tcpPort() {
        return tcpPort;
    }

    /**
     * The transport sockets use when {@link RdsSocketOptions#SO_RDS_TRANSPORT} is not set, or {@code null}: then
     * {@code "tcp"} if present, else {@code "loopback"}.
     *
     * @return the transport name, or {@code null}
     */
    public String defaultTransport() {
        return defaultTransport;
    }

    /**
     * The local addresses sockets may bind; empty means any address the transport accepts.
     *
     * @return the addresses, unmodifiable
     */
    public Set<InetAddress> addresses() {
        return addresses;
    }

    /**
     * The first reconnect backoff ceiling (the kernel's {@code reconnect_min_delay_ms}).
     *
     * @return the delay
     */
    public Duration reconnectMinDelay() {
        return reconnectMinDelay;
    }

    /**
     * The largest reconnect backoff ceiling (the kernel's {@code reconnect_max_delay_ms}, 1 s).
     *
     * @return the delay
     */
    public Duration reconnectMaxDelay() {
        return reconnectMaxDelay;
    }

    /**
     * How long a connection may stay silent before it is declared dead and reconnected; {@link Duration#ZERO} (the
     * default) leaves dead-peer detection to TCP keepalive. While a path is up and has heard nothing for half of
     * this, it pings the peer (an RDS ping to port 0, which kernel peers answer too); with nothing heard for the
     * whole interval, it drops the connection and reconnects, so a silent peer is found within this interval plus a
     * quarter of it.
     *
     * @return the interval, or zero
     */
    public Duration livenessInterval() {
        return livenessInterval;
    }

    /**
     * Busy-poll mode, for the lowest latency at the price of CPU (and of some one-way throughput for large messages):
     * a blocking receive polls until a message comes (or its timeout) instead of parking its thread, and a blocking
     * send waiting for its budget does too. Over TCP the application threads then do the socket I/O themselves, as
     * the kernel's RDS does in the sender's context: a polling receive reads the socket of the path that delivered to
     * it last, a socket's first send after a receive (a reply) writes its path's pass in the sending thread, and its
     * further sends of at most 64 KiB (a stream) are written by the sending threads in batches, or by the I/O thread
     * if no application thread has within 200 µs; the I/O threads keep the rest (larger messages, timers, TLS
     * connections) and wait as in the default mode. The TCP transport does this on its epoll sockets, or its NIO ones
     * where epoll is not used. Polling threads yield the core between checks, so threads with work still run; but
     * each keeps a core busy whenever nobody else wants it, so give it only with cores to spare. Off by default: a
     * receive waiting for a reply yields for {@link #replySpin()} and then parks (over TCP on epoll it reads the
     * socket itself while it yields, and a reply writes itself: the transport's {@code tcp.callerIo}), and the TCP
     * I/O threads do the rest of the socket I/O, yield for a short while after their last work and then sleep (the
     * transport's {@code tcp.yieldMicros}).
     *
     * @return whether the stack busy-polls
     */
    public boolean busyPoll() {
        return busyPoll;
    }

    /**
     * How long a blocking receive yields its core before it parks, when its socket sent something since the
     * receive's last wait: the case of a request waiting for its reply, which on a fast network comes within tens
     * of microseconds. Parking for it costs the I/O thread that delivers the reply a wake-up of the parked thread,
     * which was much of that thread's work in request-reply traffic. The reader yields between checks, so threads
     * with work still run; once the replies it waited for took longer than this on average, it parks at once again
     * (so a slow peer costs no spinning), and a receive with nothing sent since its last wait (a reader of a
     * one-way stream) always parks at once. Used without busy-poll only.
     *
     * <p>A blocking send that finds its send budget full waits the same way, in either mode: the budget comes back
     * with the peer's acknowledgement, which the message sent at half the budget asked for, so it yields for up to
     * this long while its socket's budget waits lately ended within a quarter of it on average, then parks (longer
     * waits, such as a stream of small messages' fill of the budget, cost more yielding than the wake-up it saves).
     *
     * <p>Only with more than one processor. 200 µs unless set; {@link Duration#ZERO} always parks.
     *
     * @return the longest yield before parking, or zero
     */
    public Duration replySpin() {
        return replySpin;
    }

    /**
     * The number of paths (lanes) offered to each peer: the kernel's multipath RDS/TCP, where two hosts carry their
     * traffic over up to 8 transport connections, each with its own sequence numbers and retransmit queue, and each
     * socket's messages to a peer stay on one path. Offered in the multipath probe (NPATHS); the two ends use the
     * smaller of their offers. The host with the smaller address opens the extra paths once the number is agreed.
     *
     * <p>8 unless set, the kernel's {@code RDS_MPATH_WORKERS}. 1 gives one transport connection per peer, as
     * kernels before 4.11 had.
     *
     * @return 1, 2, 4 or 8
     */
    public int paths() {
        return paths;
    }

    /**
     * Whether the stack publishes itself as a JMX MBean on the platform MBean server, under
     * {@code org.rds4j:type=Stack,name=NAME}, from creation until {@link RdsStack#close()}: its connections, sockets,
     * congestion maps and counters as {@link RdsStack#info()} reports them (docs/inspection.md). On by default, as
     * {@code rds-info} needs nothing to be switched on; {@code ./rds4j info} reads it.
     *
     * @return whether the stack registers its MBean
     */
    public boolean jmx() {
        return jmx;
    }

    /**
     * {@code SO_SNDBUF} of a new socket (the kernel's {@code wmem_default}).
     *
     * @return the size in bytes
     */
    public int defaultSendBuffer() {
        return defaultSendBuffer;
    }

    /**
     * {@code SO_RCVBUF} of a new socket (the kernel's {@code rmem_default}).
     *
     * @return the size in bytes
     */
    public int defaultReceiveBuffer() {
        return defaultReceiveBuffer;
    }

    /**
     * The largest value {@code SO_SNDBUF} and {@code SO_RCVBUF} accept before doubling (the kernel's
     * {@code wmem_max}/{@code rmem_max}); larger values are capped, as in Linux.
     *
     * @return the cap in bytes
     */
    public int maxSocketBuffer() {
        return maxSocketBuffer;
    }

    /**
     * The most payload bytes one peer host may have queued on this stack's sockets beyond their budgets (half of
     * each socket's {@code SO_RCVBUF}, where its port turns congested). RDS's own flow control is advisory: a
     * receiver marks its port congested and an honest sender stops, but nothing makes a peer stop, so a peer that
     * ignores congestion maps could otherwise fill the heap. Past this bound the stack stops reading that peer's
     * transport connections (TCP then pushes back on that peer alone, as a full socket buffer does), until the
     * application has read that excess down to half the bound. Nothing is dropped; every other peer is unaffected.
     * The {@code recv_peer_paused} counter counts each time a connection stops.
     *
     * <p>An honest peer's excess is only what its sockets sent before our map reached them (measured up to twice
     * their send budgets, half of {@code SO_SNDBUF} each), so it stays below the bound however full it keeps our
     * queues; keep the bound well above that, or an application that reads its sockets in a fixed order could wait
     * for a message behind a stopped connection. What a host holds for a peer is at most its sockets'
     * budgets plus this bound. 64 MiB unless set. docs/security.md lists every bound.
     *
     * @return the bound in bytes
     */
    public long peerReceiveBytes() {
        return peerReceiveBytes;
    }

    /**
     * The most payload bytes all peers together may have queued on this stack's sockets beyond their budgets: the
     * same count as {@link #peerReceiveBytes()}, summed over peers, so that many hostile peers cannot together
     * hold what one may not. Past it, every peer holding any such bytes stops being read at its next read; a peer
     * holding none (honest, its messages within their sockets' budgets) is never stopped, and a stopped peer reads
     * again once its own excess is read or the stack's is down to half this bound. 256 MiB unless set.
     *
     * @return the bound in bytes
     */
    public long stackReceiveBytes() {
        return stackReceiveBytes;
    }

    /**
     * The most direct (off-heap) memory the stack's buffers may take: its transports' pools (TCP's read buffers,
     * write batches and TLS buffers) and the direct payload buffers of large messages. Counted in
     * {@link RdsStack#info()} ({@link RdsMemoryInfo}), the stack's MBean and {@code rds4j info}. When the count
     * reaches {@link #OFF_HEAP_SHED_PERCENT} percent of it, the stack refuses connections from peers it does not keep
     * yet (the newest first: they are refused until the count is back under), counted in {@code conn_peer_refused}
     * and {@link RdsMemoryInfo#refusals()} and logged at most once a minute; connections it keeps go on being read and
     * written. The large messages' direct buffers may take half of the bound; past that a new one is taken from the
     * heap instead (counted as a refusal too). Buffers a connection holds go back to the pool when it closes. 128 MiB unless set: a receiver with the JVM's default options then stays well under
     * 512 MB resident however many connections peers open and close (docs/buffers-and-congestion.md).
     *
     * @return the bound in bytes
     */
    public long offHeapBytes() {
        return offHeapBytes;
    }

    /**
     * The peers this stack talks to, as address prefixes; empty (the default) for any, as the kernel's RDS. A
     * connection from an address outside them is refused (reset) before the stack keeps anything for it, counted
     * ({@code conn_peer_refused}) and logged at most once a minute; a send to such an address fails with
     * {@link EaccesException}. RDS over TCP authenticates nobody, so this is the first line after the firewall.
     *
     * @return the allowed prefixes, IPv4 and IPv6; empty to allow every peer
     */
    public List<RdsAddressPrefix> allowedPeers() {
        return allowedPeers;
    }

    /**
     * The most peers a stack keeps connections for at once that other hosts opened. A connection from a new peer
     * beyond it is refused before anything is kept for it ({@code conn_peer_refused}); peers already known, and
     * peers this host sends to, are not limited. 4096 unless set.
     *
     * @return the limit on peers that connected to us
     */
    public int maxPeers() {
        return maxPeers;
    }

    /**
     * How long a peer that never became useful (no message from it reached a socket, and no socket sent to it) may
     * keep its state after its last connection closed: then its connection, paths, congestion map and any attempt to
     * connect back to it are dropped, as if it had never connected. A peer that exchanged messages keeps its state
     * (its sequence numbers guard against duplicates when it reconnects), as in the kernel. 5 s unless set.
     *
     * @return the time after which an idle, useless peer is forgotten
     */
    public Duration idlePeerTimeout() {
        return idlePeerTimeout;
    }

    /**
     * How long a message may take to arrive once its first byte has (header and payload; the time a connection is
     * not being read because of {@link #peerReceiveBytes()} does not count). A connection whose peer starts a message
     * and stalls (a slowloris: a header that announces 1 MiB makes the stack set 1 MiB aside) is dropped after it,
     * counted in {@code recv_frame_timeout}; the peer reconnects and resends as after any reset. An honest peer sends a
     * message as fast as TCP takes it. 30 s unless set.
     *
     * @return the time a started message has to complete
     */
    public Duration frameTimeout() {
        return frameTimeout;
    }

    /**
     * How many connection attempts to a peer in a row must fail, the same way, before the stack reports the peer
     * ({@link RdsPeerState}) and acts on it. The attempts are path 0's (the connection every peer has):
     * <ul>
     * <li>{@link RdsPeerState#REFUSED}: the peer took the TCP connection and ended it before sending anything (how a
     * stack whose admission refuses us answers: it resets the connection right after accepting it; counted only for a
     * peer not heard from since it was last unreachable, as a kernel tearing down a lost path ends connections so
     * too), or its TLS handshake failed. The messages queued for the peer fail with an {@link RdsSocketOptions#RDS_RECVERR}
     * notification ({@link RdsDatagram.Failure#REFUSED}, {@link RdsDatagram.Failure#AUTHENTICATION_FAILED}), and
     * sends to it fail at once ({@link EconnrefusedException}, {@link EaccesException}) until a connection to it
     * carries a frame again. Attempts go on with the reconnect backoff meanwhile.</li>
     * <li>{@link RdsPeerState#UNREACHABLE}: no TCP connection could be made (nothing listens there, no route, a
     * timeout). Sends still queue, as in the kernel, unless {@link #unreachableTimeout()} is set.</li>
     * </ul>
     * 3 unless set. With the default reconnect delays the third attempt comes within a few milliseconds of the first
     * where the peer's host answers at once; where nothing answers, each attempt lasts the transport's connect timeout
     * (TCP: {@code tcp.connectTimeoutMs}, 10 s). docs/reliability.md has the details.
     *
     * @return the number of failed attempts in a row, at least 1
     */
    public int peerFailureThreshold() {
        return peerFailureThreshold;
    }

    /**
     * How long a peer may stay {@link RdsPeerState#UNREACHABLE} before what is queued for it fails with an
     * {@link RdsSocketOptions#RDS_RECVERR} notification ({@link RdsDatagram.Failure#UNREACHABLE}); checked at each
     * failed attempt, so it acts within this time plus one reconnect delay ({@link #reconnectMaxDelay()}). Messages
     * sent later queue again and fail at the next failed attempt while the peer stays unreachable.
     * {@link Duration#ZERO} (the default) keeps them queued for as long as the peer is away, as the kernel does.
     *
     * @return the time, or zero for never
     */
    public Duration unreachableTimeout() {
        return unreachableTimeout;
    }

    /**
     * TLS between rds4j hosts over the TCP transport, or {@code null} (the default) for plain RDS/TCP with every
     * peer, as the kernel's RDS.
     *
     * @return the TLS settings, or {@code null} if TLS is off
     */
    public RdsTlsConfig tls() {
        return tls;
    }

    /**
     * Transport-specific settings, such as {@code tcp.native} (see each transport's documentation).
     *
     * @return the properties, unmodifiable
     */
    public Map<String, String> properties() {
        return properties;
    }

    /**
     * A transport-specific setting.
     *
     * @param key the property's name, such as {@code tcp.native}
     * @param fallback what to return when it is not set; may be {@code null}
     * @return the value, or {@code fallback}
     */
    public String property(String key, String fallback) {
        Objects.requireNonNull(key, "key is null: pass the property's name, such as tcp.native");
        return properties.getOrDefault(key, fallback);
    }

    @Override
    public String toString() {
        return "RdsStackConfig[name=" + name + ", tcpPort=" + tcpPort + ", defaultTransport=" + defaultTransport
                + ", addresses=" + addresses + (tls == null ? "" : ", " + tls) + "]";
    }

    /** Builds an {@link RdsStackConfig}. */
    public static final class Builder {
        private String name = "rds";
        private int tcpPort = RDS_TCP_PORT;
        private String defaultTransport;
        private final Set<InetAddress> addresses = new LinkedHashSet<>();
        private Duration reconnectMinDelay = Duration.ofMillis(1);
        private Duration reconnectMaxDelay = Duration.ofSeconds(1);
        private Duration livenessInterval = Duration.ZERO;
        private boolean busyPoll;
        private Duration replySpin = Duration.ofNanos(200_000);
        private int paths = 8;
        private boolean jmx = true;
        private int defaultSendBuffer = DEFAULT_SOCKET_BUFFER;
        private int defaultReceiveBuffer = DEFAULT_SOCKET_BUFFER;
        private int maxSocketBuffer = 16 * 1024 * 1024;
        private long peerReceiveBytes = 64L * 1024 * 1024;
        private long stackReceiveBytes = 256L * 1024 * 1024;
        private long offHeapBytes = 128L * 1024 * 1024;
        private final List<RdsAddressPrefix> allowedPeers = new ArrayList<>();
        private int maxPeers = 4096;
        private Duration idlePeerTimeout = Duration.ofSeconds(5);
        private Duration frameTimeout = Duration.ofSeconds(30);
        private int peerFailureThreshold = 3;
        private Duration unreachableTimeout = Duration.ZERO;
        private RdsTlsConfig tls;
        private final Map<String, String> properties = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Names the stack, for logs and thread names.
         *
         * @param name the name; {@code "rds"} unless set
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name is null: pass the stack's name, such as \"a\"");
            return this;
        }

        /**
         * Sets the TCP port the TCP transport listens on and connects to.
         *
         * @param port 1 to 65535; {@value RdsStackConfig#RDS_TCP_PORT}, the kernel's, unless set
         * @return this builder
         */
        public Builder tcpPort(int port) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("tcpPort must be 1..65535, was " + port);
            }
            this.tcpPort = port;
            return this;
        }

        /**
         * Sets the transport of sockets that do not choose one with {@link RdsSocketOptions#SO_RDS_TRANSPORT}.
         *
         * @param transport {@code "tcp"}, {@code "loopback"}, or {@code null} for TCP if present, else loopback
         * @return this builder
         */
        public Builder defaultTransport(String transport) {
            this.defaultTransport = transport;
            return this;
        }

        /**
         * Adds a local address this stack owns; sockets may bind only its addresses once any is given.
         *
         * @param address a unicast address
         * @return this builder
         */
        public Builder address(InetAddress address) {
            this.addresses.add(Objects.requireNonNull(address, "address is null: pass one of this host's unicast"
                    + " addresses, such as InetAddress.getByName(\"127.0.0.1\")"));
            return this;
        }

        /**
         * Sets the reconnect backoff's first and largest ceilings.
         *
         * @param min the first ceiling, positive; 1 ms unless set
         * @param max the largest ceiling, at least {@code min}; 1 s unless set
         * @return this builder
         */
        public Builder reconnectDelays(Duration min, Duration max) {
            Objects.requireNonNull(min, "min is null: pass the first reconnect delay, such as Duration.ofMillis(1)");
            Objects.requireNonNull(max, "max is null: pass the largest reconnect delay, such as Duration.ofSeconds(1)");
            if (min.isNegative() || min.isZero() || max.compareTo(min) < 0) {
                throw new IllegalArgumentException("need 0 < min <= max, was " + min + ", " + max);
            }
            this.reconnectMinDelay = min;
            this.reconnectMaxDelay = max;
            return this;
        }

        /**
         * Turns busy-poll mode on or off, see {@link RdsStackConfig#busyPoll()}.
         *
         * @param on whether to spin instead of parking
         * @return this builder
         */
        public Builder busyPoll(boolean on) {
            this.busyPoll = on;
            return this;
        }

        /**
         * Sets how long a receive that waits for a reply yields before it parks, see
         * {@link RdsStackConfig#replySpin()}.
         *
         * @param spin zero to always park, at most one second
         * @return this builder
         */
        public Builder replySpin(Duration spin) {
            Objects.requireNonNull(spin, "spin is null: pass a Duration (Duration.ZERO always parks)");
            if (spin.isNegative() || spin.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("replySpin must be 0 to 1 s (a few hundred microseconds is"
                        + " plenty), was " + spin);
            }
            this.replySpin = spin;
            return this;
        }

        /**
         * Sets the number of paths offered to each peer, see {@link RdsStackConfig#paths()}.
         *
         * @param n 1, 2, 4 or 8
         * @return this builder
         */
        public Builder paths(int n) {
            if (n != 1 && n != 2 && n != 4 && n != 8) {
                throw new IllegalArgumentException("paths must be 1, 2, 4 or 8 (a power of two, as the kernel hashes"
                        + " sockets onto paths with a mask), was " + n);
            }
            this.paths = n;
            return this;
        }

        /**
         * Turns the stack's JMX MBean on (the default) or off, see {@link RdsStackConfig#jmx()}.
         *
         * @param on whether to register the MBean
         * @return this builder
         */
        public Builder jmx(boolean on) {
            this.jmx = on;
            return this;
        }

        /**
         * Sets how long a connection may stay silent, see {@link RdsStackConfig#livenessInterval()}.
         *
         * @param interval the interval; zero (the default) turns the check off
         * @return this builder
         */
        public Builder livenessInterval(Duration interval) {
            Objects.requireNonNull(interval, "interval is null: pass a Duration (Duration.ZERO turns the check off)");
            if (interval.isNegative()) {
                throw new IllegalArgumentException("livenessInterval cannot be negative, was " + interval);
            }
            this.livenessInterval = interval;
            return this;
        }

        /**
         * Sets {@code SO_SNDBUF} of new sockets, as the kernel's {@code wmem_default} (the size after doubling).
         *
         * @param bytes positive; {@value RdsStackConfig#DEFAULT_SOCKET_BUFFER} unless set
         * @return this builder
         */
        public Builder defaultSendBuffer(int bytes) {
            this.defaultSendBuffer = positive(bytes, "defaultSendBuffer");
            return this;
        }

        /**
         * Sets {@code SO_RCVBUF} of new sockets, as the kernel's {@code rmem_default} (the size after doubling).
         *
         * @param bytes positive; {@value RdsStackConfig#DEFAULT_SOCKET_BUFFER} unless set
         * @return this builder
         */
        public Builder defaultReceiveBuffer(int bytes) {
            this.defaultReceiveBuffer = positive(bytes, "defaultReceiveBuffer");
            return this;
        }

        /**
         * Sets the cap on {@code SO_SNDBUF} and {@code SO_RCVBUF}, as the kernel's {@code wmem_max}/{@code rmem_max}.
         *
         * @param bytes positive; 16 MiB unless set
         * @return this builder
         */
        public Builder maxSocketBuffer(int bytes) {
            this.maxSocketBuffer = positive(bytes, "maxSocketBuffer");
            return this;
        }

        /**
         * Sets the most payload bytes one peer may have queued beyond our sockets' budgets, see
         * {@link RdsStackConfig#peerReceiveBytes()}.
         *
         * @param bytes at least 64 KiB; 64 MiB unless set
         * @return this builder
         */
        public Builder peerReceiveBytes(long bytes) {
            if (bytes < 64 * 1024) {
                throw new IllegalArgumentException("peerReceiveBytes must be at least 65536 (64 KiB), was " + bytes);
            }
            this.peerReceiveBytes = bytes;
            return this;
        }

        /**
         * Sets the most payload bytes all peers together may have queued beyond our sockets' budgets, see
         * {@link RdsStackConfig#stackReceiveBytes()}.
         *
         * @param bytes at least 64 KiB; 256 MiB unless set
         * @return this builder
         */
        public Builder stackReceiveBytes(long bytes) {
            if (bytes < 64 * 1024) {
                throw new IllegalArgumentException("stackReceiveBytes must be at least 65536 (64 KiB), was " + bytes);
            }
            this.stackReceiveBytes = bytes;
            return this;
        }

        /**
         * Sets the most direct memory the stack's buffers may take, see {@link RdsStackConfig#offHeapBytes()}.
         *
         * @param bytes at least 8 MiB; 128 MiB unless set
         * @return this builder
         */
        public Builder offHeapBytes(long bytes) {
            if (bytes < 8L * 1024 * 1024) {
                throw new IllegalArgumentException("offHeapBytes must be at least 8388608 (8 MiB): one pool chunk per"
                        + " I/O thread and the buffers of a few connections; was " + bytes);
            }
            this.offHeapBytes = bytes;
            return this;
        }

        /**
         * Adds peers this stack talks to, see {@link RdsStackConfig#allowedPeers()}.
         *
         * @param prefixes IPv4 or IPv6 prefixes such as {@code 10.1.0.0/16}, {@code fd00::/8} or a single address
         * @return this builder
         * @throws IllegalArgumentException if one is not an address literal with an optional prefix length
         */
        public Builder allowPeers(String... prefixes) {
            Objects.requireNonNull(prefixes, "prefixes is null: pass prefixes such as \"10.1.0.0/16\"");
            for (String p : prefixes) {
                allowedPeers.add(RdsAddressPrefix.parse(Objects.requireNonNull(p, "a prefix is null: pass prefixes"
                        + " such as \"10.1.0.0/16\", none of them null")));
            }
            return this;
        }

        /**
         * Sets the most peers kept that connected to us, see {@link RdsStackConfig#maxPeers()}.
         *
         * @param n positive; 4096 unless set
         * @return this builder
         */
        public Builder maxPeers(int n) {
            this.maxPeers = positive(n, "maxPeers");
            return this;
        }

        /**
         * Sets how long an idle peer that never became useful keeps its state, see
         * {@link RdsStackConfig#idlePeerTimeout()}.
         *
         * @param timeout positive; 5 s unless set
         * @return this builder
         */
        public Builder idlePeerTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout is null: pass a positive Duration, such as Duration.ofSeconds(5)");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("idlePeerTimeout must be positive, was " + timeout);
            }
            this.idlePeerTimeout = timeout;
            return this;
        }

        /**
         * Sets how many failed connection attempts in a row report a peer, see
         * {@link RdsStackConfig#peerFailureThreshold()}.
         *
         * @param attempts at least 1
         * @return this builder
         */
        public Builder peerFailureThreshold(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("peerFailureThreshold must be at least 1, was " + attempts);
            }
            this.peerFailureThreshold = attempts;
            return this;
        }

        /**
         * Sets how long an unreachable peer keeps its queued messages, see
         * {@link RdsStackConfig#unreachableTimeout()}.
         *
         * @param timeout a positive time, or {@link Duration#ZERO} to keep them for as long as the peer is away
         * @return this builder
         */
        public Builder unreachableTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout is null: pass Duration.ZERO (off) or a positive Duration, such as"
                    + " Duration.ofSeconds(30)");
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("unreachableTimeout must be zero (off) or positive, was " + timeout);
            }
            this.unreachableTimeout = timeout;
            return this;
        }

        /**
         * Sets how long a started message has to complete, see {@link RdsStackConfig#frameTimeout()}.
         *
         * @param timeout positive; 30 s unless set
         * @return this builder
         */
        public Builder frameTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout is null: pass a positive Duration, such as"
                    + " Duration.ofSeconds(30)");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("frameTimeout must be positive, was " + timeout);
            }
            this.frameTimeout = timeout;
            return this;
        }

        /**
         * Turns on TLS between rds4j hosts, see {@link RdsStackConfig#tls()} and {@link RdsTlsConfig}.
         *
         * @param tls the TLS settings; {@code null} turns TLS off again
         * @return this builder
         */
        public Builder tls(RdsTlsConfig tls) {
            this.tls = tls;
            return this;
        }

        /**
         * Sets a transport-specific property, see {@link RdsStackConfig#properties()}.
         *
         * @param key the property's name
         * @param value its value
         * @return this builder
         */
        public Builder property(String key, String value) {
            Objects.requireNonNull(key, "key is null: pass the property's name, such as tcp.native");
            Objects.requireNonNull(value, "value is null: pass the property's value as text");
            this.properties.put(key, value);
            return this;
        }

        /**
         * Builds the configuration.
         *
         * @return a new, immutable configuration
         * @throws IllegalArgumentException if TLS is on with the same port as RDS/TCP
         */
        public RdsStackConfig build() {
            if (tls != null && tls.port() == tcpPort) {
                throw new IllegalArgumentException("the TLS port and the RDS/TCP port are both " + tcpPort + "; give"
                        + " TLS a port of its own (RdsTlsConfig.Builder.port)");
            }
            return new RdsStackConfig(this);
        }

        private static int positive(int v, String what) {
            if (v <= 0) {
                throw new IllegalArgumentException(what + " must be positive, was " + v);
            }
            return v;
        }
    }
}

package org.rds4j.transport.tcp.chaos;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;

/**
 * What the fault-injection tests share: the seed, free ports, the deterministic message bodies every sender and
 * receiver agree on, and the Netty leak check.
 *
 * <p><b>Message bodies.</b> Message {@code k} of stream {@code s} has a size and a body that are pure functions of
 * {@code (seed, s, k)}, so a receiver (in this JVM or another) regenerates the expected bytes and compares them all.
 * The body starts with {@code k} as 8 little-endian bytes, then {@code s} as 4 little-endian bytes, then
 * pseudo-random bytes; a message shorter than 12 bytes carries a prefix of that. Little-endian on purpose: a
 * truncated prefix of {@code k} is its low bytes, so even a 1-byte message names {@code k} modulo 256 and a receiver
 * can place it. Only a 0-byte message carries nothing; the receiver takes it as the next expected one (and a wrong
 * guess shows up as a mismatch on the next message that names itself).
 */
final class Chaos {
    /** The system property that fixes the seed of every chaos test, to replay a failure. */
    static final String SEED_PROPERTY = "rds4j.chaos.seed";

    static final InetAddress A = address("127.0.0.1");
    static final InetAddress B = address("127.0.0.2");

    private Chaos() {
    }

    /** The seed: {@code -Drds4j.chaos.seed=...} if given, else a fresh one. Printed by every test that uses it. */
    static long seed(String test) {
        String fixed = System.getProperty(SEED_PROPERTY);
        long seed = fixed != null && !fixed.isBlank() ? Long.decode(fixed.trim()) : System.nanoTime() ^ mix64(
                System.currentTimeMillis());
        System.out.println("[" + test + "] seed = " + seed + " (replay with -D" + SEED_PROPERTY + "=" + seed + ")");
        return seed;
    }

    /** A system property as a positive long, or the fallback. */
    static long longProperty(String name, long fallback) {
        String v = System.getProperty(name);
        return v == null || v.isBlank() ? fallback : Long.parseLong(v.trim());
    }

    /**
     * A TCP port free on both 127.0.0.1 and 127.0.0.2 (both stacks listen on it, each on its own address), other
     * than {@code avoid}. A tiny race with other processes remains, as in every free-port helper.
     */
    static int freePort(int avoid) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            try (ServerSocket a = new ServerSocket(0, 1, A)) {
                int port = a.getLocalPort();
                if (port == avoid) {
                    continue;
                }
                try (ServerSocket onB = new ServerSocket(port, 1, B)) {
                    assert onB.isBound();
                    return port;
                } catch (IOException inUseOnB) {
                    // try another
                }
            }
        }
        throw new IOException("no TCP port free on both 127.0.0.1 and 127.0.0.2");
    }

    /**
     * Fails the test if Netty found a leaked buffer. The recorder ({@code org.rds4j.transport.tcp.LeakRecorder},
     * installed by this module's pom for every test) keeps its check package-private and this package may not change
     * it, so it is called reflectively (tests run on the class path, so that is allowed).
     */
    static void assertNoLeaks() {
        try {
            Method m = Class.forName("org.rds4j.transport.tcp.LeakRecorder").getDeclaredMethod("assertNoLeaks");
            m.setAccessible(true);
            m.invoke(null);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach LeakRecorder.assertNoLeaks", e);
        }
    }

    /** The counters a chaos summary prints, from one stack's {@code counters()}. */
    static String counters(Map<String, Long> c) {
        StringBuilder sb = new StringBuilder();
        for (String name : new String[] {"conn_reset", "send_retransmitted", "recv_drop_old_seq", "conn_dead_peer",
                "send_flushed", "ack_sent", "ack_received", "ack_ping_sent"}) {
            if (c.containsKey(name)) {          // the last five came with acknowledgements; absent before
                sb.append(sb.length() == 0 ? "" : " ").append(name).append('=').append(c.get(name));
            }
        }
        return sb.toString();
    }

    /** Where a thread is, for a failure message: the top frames of its stack, one a line. */
    static String stackOf(Thread t) {
        StringBuilder sb = new StringBuilder();
        StackTraceElement[] frames = t.getStackTrace();
        sb.append("\n      ").append(t.getName()).append(" ").append(t.getState());
        for (int i = 0; i < Math.min(12, frames.length); i++) {
            sb.append("\n        at ").append(frames[i]);
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------------------------------------ bodies

    /** Stafford's mix13 (SplittableRandom's finaliser): a good 64-bit hash. */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The hash that fixes message {@code k} of stream {@code s}. */
    static long messageHash(long seed, int stream, long k) {
        return mix64(seed ^ mix64(0x9E3779B97F4A7C15L * (stream + 1)) ^ mix64(k + 0x632BE59BD9B4E019L));
    }

    /**
     * A size in {@code [0, max]}, log-uniform in {@code size + 1}: {@code size = floor((max + 1)^u) - 1} for a
     * uniform {@code u}. Every power-of-two band of sizes gets the same share of messages, so small messages (the
     * common case, and the most headers per byte) dominate the count while large ones dominate the bytes. Mean for
     * {@code max = 65536}: about 5.9 KB.
     */
    static int logUniformSize(long hash, int max) {
        double u = (mix64(hash ^ 0x5DEECE66DL) >>> 11) * 0x1.0p-53;
        int size = (int) Math.floor(Math.exp(u * Math.log(max + 1.0))) - 1;
        return Math.max(0, Math.min(max, size));
    }

    /** A size in {@code [min, max]}: {@code min} plus a {@linkplain #logUniformSize log-uniform} size. */
    static int size(long hash, int min, int max) {
        return min + logUniformSize(hash, max - min);
    }

    /** Writes the body of message {@code k} of stream {@code s} into {@code out[0, size)}. */
    static void fillBody(byte[] out, int size, long hash, int stream, long k) {
        ByteBuffer b = ByteBuffer.wrap(out, 0, size).order(ByteOrder.LITTLE_ENDIAN);
        long x = mix64(hash ^ 0x2545F4914F6CDD1DL) | 1;   // xorshift64 state: never zero
        if (size >= 8) {
            b.putLong(k);
        } else {
            for (int i = 0; i < size; i++) {
                b.put((byte) (k >>> (8 * i)));
            }
            return;
        }
        if (size >= 12) {
            b.putInt(stream);
        } else {
            for (int i = 0; b.hasRemaining(); i++) {
                b.put((byte) (stream >>> (8 * i)));
            }
            return;
        }
        while (b.remaining() >= 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.putLong(x);
        }
        while (b.hasRemaining()) {
            b.put((byte) x);
            x >>>= 8;
        }
    }

    /**
     * Which message a received body names: all of {@code k} if it has 8 bytes, else its low bytes, resolved to the
     * candidate nearest to {@code expected}; a 0-byte message is taken to be {@code expected}.
     */
    static long identify(ByteBuffer payload, long expected) {
        int len = payload.remaining();
        int p = payload.position();
        if (len >= 8) {
            return payload.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(p);
        }
        if (len == 0) {
            return expected;
        }
        long low = 0;
        for (int i = 0; i < len; i++) {
            low |= (payload.get(p + i) & 0xFFL) << (8 * i);
        }
        long span = 1L << (8 * len);
        long c = (expected & ~(span - 1)) | low;
        long best = c;
        for (long cand : new long[] {c - span, c + span}) {
            if (cand >= 0 && Math.abs(cand - expected) < Math.abs(best - expected)) {
                best = cand;
            }
        }
        return best;
    }

    private static InetAddress address(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static InetSocketAddress at(InetAddress a, int port) {
        return new InetSocketAddress(a, port);
    }
}

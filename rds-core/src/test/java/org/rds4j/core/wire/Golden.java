package org.rds4j.core.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Shared helpers for the golden-vector tests: hex, test resources, and the kind of a message. */
final class Golden {
    private Golden() {
    }

    /** The kinds of message seen in the captures (docs/protocol.md, "The byte stream", "Ping and multipath probe"). */
    enum Kind {
        CONG_MAP, PROBE_PING, PROBE_PONG, PING, PONG, DATA
    }

    /**
     * The kind a receiver would see: a congestion map by the exact flag test (protocol.md "Header"), then by ports: dport 0 is a
     * ping (from sport 1, a multipath probe), sport 0 a pong (to dport 1, a probe pong) (protocol.md "Ping and multipath probe").
     */
    static Kind kind(RdsHeader h) {
        if (h.isCongestionMap()) {
            return Kind.CONG_MAP;
        }
        if (h.destinationPort() == 0) {
            return h.sourcePort() == 1 ? Kind.PROBE_PING : Kind.PING;
        }
        if (h.sourcePort() == 0) {
            return h.destinationPort() == 1 ? Kind.PROBE_PONG : Kind.PONG;
        }
        return Kind.DATA;
    }

    static byte[] hex(String s) {
        s = s.replace(" ", "");
        if (s.length() % 2 != 0) {
            throw new IllegalArgumentException("odd hex length: " + s);
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /** A file under src/test/resources/golden/. */
    static byte[] resource(String name) {
        try (InputStream in = Golden.class.getResourceAsStream("/golden/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource golden/" + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package org.rds4j.core.stack;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.FuzzSeed;
import org.rds4j.core.wire.RdsHeader;

/**
 * The committed seed inputs of {@link PathFuzzTest}: short scripts of a peer's moves that reach each part of the
 * path (in-order data to every socket, the multipath handshake as golden/01-first-contact shows it, port 4020's map
 * from golden/03-congestion, a too-long h_len, a stalled payload and a reset, our sends and the peer's
 * acknowledgements, a peer restart). Each method here mirrors what the matching move of {@code PathFuzzTest.Run}
 * consumes; {@code -Drds4j.fuzz.writeSeeds=true} rewrites the files.
 */
class PathFuzzSeedsTest {
    private static final String DIR = "src/test/resources/org/rds4j/core/stack/PathFuzzTestInputs/peerDrivesThePath";
    private FuzzSeed s;

    @Test
    void pathSeeds() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        seeds.put("in-order-data", script(() -> {
            for (int i = 0; i < 3; i++) {
                data(0, 0, 7000, i, ("hello " + i).getBytes());
            }
            feed(512);
            drain(0);
            pump(8);
        }));
        seeds.put("golden-first-contact-handshake", script(() -> {
            ping(0, 8, 1);                                  // the kernel's probe: NPATHS 8 (and a GEN_NUM)
            pong(8, 1);
            data(0, 0, 7001, 1, new byte[] {1, 2, 3});
            pump(8);
            feed(512);
        }));
        seeds.put("golden-congestion-port-4020", script(() -> {
            op(3);
            s.bool(true).number(0, 8, 1).number(0, 65535, 4020).bool(true).bool(true).bool(true);
            feed(512);
            data(0, 0, 7000, 0, new byte[] {9});
            pump(2);
            feed(512);
        }));
        seeds.put("hlen-above-1mib-then-reconnect", script(() -> {
            data(0, 0, 7000, 0, new byte[] {1});
            op(5);
            s.anyLong(2).number(0, 255, 0).number(0, 65535, 7000).number(0, 65535, 4000)
                    .number(CoreStack.MAX_MESSAGE_SIZE + 1, 0xFFFF_FFFFL, CoreStack.MAX_MESSAGE_SIZE + 1);
            ext0();
            feed(512);
            op(12);                                         // refused: the path is still disconnecting
            pump(1);                                        // the transport reports the close
            op(12);
            data(0, 0, 7000, 1, new byte[] {2});
            feed(512);
        }));
        seeds.put("stalled-payload-reset-resend", script(() -> {
            data(0, 0, 7000, 0, new byte[] {1});
            op(6);
            s.number(2, 65535, 7000);
            port(1);
            s.number(65, 70_000, 70_000);
            ext0();
            s.number(0, 64, 3).bytes(new byte[] {1, 2, 3});
            feed(512);
            op(11);
            s.bool(true);
            op(12);
            data(1, RdsHeader.FLAG_RETRANSMITTED, 7000, 0, new byte[] {1});     // a duplicate: dropped
            data(0, RdsHeader.FLAG_RETRANSMITTED, 7000, 0, new byte[] {4});     // resent, not seen yet: taken
            feed(512);
        }));
        seeds.put("sends-pings-acks", script(() -> {
            for (int i = 0; i < 3; i++) {
                op(10);
                s.number(0, 2, i).number(0, 100, 2).bytes(new byte[] {7, (byte) i}).number(0, 3, i);
            }
            pump(8);
            ping(2, 0, 0);
            op(0);
            s.number(0, 4, 0).number(0, 4, 0).bool(false).bool(true).number(1, 64, 3).bool(true).number(0, 3, 0)
                    .number(0, 200, 0);
            port(0);
            ext0();
            feed(512);
            pump(8);
        }));
        seeds.put("peer-restart-gen-change", script(() -> {
            ping(0, 8, 1);
            data(0, 0, 7000, 0, new byte[] {1});
            ping(0, 8, 2);                                  // a new GEN_NUM: the peer restarted
            data(1, RdsHeader.FLAG_RETRANSMITTED, 7000, 0, new byte[] {2});
            feed(512);
        }));
        seeds.put("split-feeds-and-wrong-maps", script(() -> {
            data(0, 0, 7002, 2, new byte[40]);
            feed(7);
            feed(41);
            feed(1);
            op(3);
            s.bool(false).number(0, 9000, 100).number(0, 8, 0).bool(true).bool(true).bool(true);
            op(3);
            s.bool(true).number(0, 8, 0).bool(false).number(0, 255, 0x81).bool(true).bool(true);
            feed(512);
        }));
        FuzzSeed.check(DIR, seeds);
    }

    /** Records one script's moves into a fresh input; {@code s} and {@code current} are that input. */
    private byte[] script(Runnable moves) {
        current = new FuzzSeed();
        s = current;
        moves.run();
        return current.build();
    }

    private FuzzSeed current;

    private void op(int code) {
        current.number(0, 12, code);
    }

    /** A data frame: seq mode (0 in order, 1 one older), flags, h_ack 0, source port 7000-7003, bound port idx. */
    private void data(int seqMode, int flags, int sport, int portIndex, byte[] payload) {
        op(0);
        current.number(0, 4, seqMode);
        if (seqMode == 1) {
            current.number(0, 3, 0);
        }
        if (flags == 0) {
            current.number(0, 4, 0);
        } else {
            current.number(0, 4, 4).number(0, 255, flags);
        }
        current.bool(true).bool(true).number(0, 3, sport - 7000).number(0, 200, payload.length).bytes(payload);
        port(portIndex);
        ext0();
    }

    /** A ping: mode 0 the probe (port 1), 2 from bound port 0; in order, not retransmitted; NPATHS and GEN_NUM. */
    private void ping(int mode, int npaths, int gen) {
        op(1);
        current.number(0, 3, mode);
        if (mode == 2) {
            current.number(0, 2, 0);
        }
        current.bool(true).bool(true);
        handshakeExt(npaths, gen);
    }

    /** The pong to our probe, to port 1. */
    private void pong(int npaths, int gen) {
        op(2);
        current.number(0, 2, 0).bool(true);
        handshakeExt(npaths, gen);
    }

    private void handshakeExt(int npaths, int gen) {
        if (npaths == 0) {
            ext0();
        } else {
            current.number(0, 3, 1).number(0, 65535, npaths).number(0, 3, gen);
        }
    }

    private void port(int index) {
        current.number(0, 5, index).number(0, 2, index);
    }

    private void ext0() {
        current.number(0, 3, 0);
    }

    private void feed(int n) {
        op(7);
        current.number(1, 512, n);
    }

    private void pump(int frames) {
        op(8);
        current.number(0, 8, frames);
    }

    private void drain(int i) {
        op(9);
        current.number(0, 2, i);
    }
}

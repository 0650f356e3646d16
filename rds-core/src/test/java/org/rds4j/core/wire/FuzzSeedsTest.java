package org.rds4j.core.wire;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The committed seed inputs of the wire fuzz tests, made from the golden kernel captures (test vectors) and a few
 * hand-made edge cases, and checked against the files: {@code -Drds4j.fuzz.writeSeeds=true} rewrites them.
 */
class FuzzSeedsTest {
    private static final String ROOT = "src/test/resources/org/rds4j/core/wire/";
    /** Each golden stream is cut to this much: enough for maps, probes, pings and data, small to commit. */
    private static final int STREAM_BYTES = 20_000;

    @Test
    void frameDecoderSeeds() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        String[] pcaps = {"01-first-contact", "03-congestion", "04-ping", "host-python-a", "host-python-b"};
        for (String pcap : pcaps) {
            int n = 0;
            for (PcapTcpStreams.Direction d : PcapTcpStreams.read(Golden.resource(pcap + ".pcap")).directions()) {
                ByteArrayOutputStream all = new ByteArrayOutputStream();
                d.chunks.forEach(all::writeBytes);
                if (all.size() == 0) {
                    continue;
                }
                byte[] stream = Arrays.copyOf(all.toByteArray(), Math.min(all.size(), STREAM_BYTES));
                // 1 MiB cap, cut as TCP might: inside a header, at its end, inside a payload.
                seeds.put("golden-" + pcap + "-" + n++, decoderSeed(4, new int[] {20, 28, 1, 300, 47, 49}, n % 2 == 0,
                        n % 3 == 0, 0, stream));
            }
        }
        byte[] ping = firstStream("04-ping");
        seeds.put("golden-04-ping-cap-48", decoderSeed(2, new int[] {48}, false, false, 0x5555_5555, ping));
        seeds.put("golden-04-ping-byte-by-byte", decoderSeed(4, new int[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, true,
                true, -1, Arrays.copyOf(ping, Math.min(ping.length, 400))));
        RdsHeader h = new RdsHeader().sequence(1).length((1 << 20) + 1).sourcePort(4000).destinationPort(4001);
        seeds.put("hlen-above-cap", decoderSeed(4, new int[] {10}, false, false, 0, concat(header(h), header(h))));
        h.length(0xFFFF_FFFFL);
        seeds.put("hlen-max", decoderSeed(3, new int[0], false, false, 0, header(h)));
        FuzzSeed.check(ROOT + "FrameDecoderFuzzTestInputs/decodeStreamCutAnywhere", seeds);
    }

    @Test
    void headerSeeds() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        int n = 0;
        for (byte[] raw : goldenColumn(3)) {
            seeds.put("golden-header-" + n++, raw);
        }
        seeds.put("short-47", new byte[47]);
        FuzzSeed.check(ROOT + "FrameDecoderFuzzTestInputs/headerRoundTrip", seeds);
    }

    @Test
    void extensionHeaderSeeds() {
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        int n = 0;
        for (byte[] ext : goldenColumn(13)) {
            // the kernel's area, then rds4j adds its own entries both ways, as to a 6.1 and a later kernel
            seeds.put("golden-exthdr-" + n++, new FuzzSeed().bytes(ext).number(0, 6, 2)
                    .number(-1, 17, ExtensionHeaders.GEN_NUM).anyLong(0x1234_5678L).bool(false)
                    .number(-1, 17, ExtensionHeaders.NPATHS).anyLong(8).bool(true).build());
        }
        byte[] several = new byte[RdsHeader.EXTHDR_SIZE];
        ExtensionHeaders.add(several, ExtensionHeaders.NPATHS, 8, ExtensionHeaders.AddMode.APPEND);
        ExtensionHeaders.add(several, ExtensionHeaders.GEN_NUM, 0xCAFE_F00DL, ExtensionHeaders.AddMode.APPEND);
        ExtensionHeaders.add(several, ExtensionHeaders.SPORT_IDX, 0, ExtensionHeaders.AddMode.APPEND);
        ExtensionHeaders.add(several, ExtensionHeaders.RDMA, 7, ExtensionHeaders.AddMode.APPEND);
        seeds.put("npaths-gennum-sportidx-rdma", new FuzzSeed().bytes(several).number(0, 6, 1)
                .number(-1, 17, ExtensionHeaders.VERSION).anyLong(1).bool(false).build());
        byte[] rdma = new byte[RdsHeader.EXTHDR_SIZE];
        ExtensionHeaders.add(rdma, ExtensionHeaders.RDMA_DEST, -1, ExtensionHeaders.AddMode.APPEND);
        ExtensionHeaders.add(rdma, ExtensionHeaders.RDMA_BYTES, 1, ExtensionHeaders.AddMode.APPEND);
        seeds.put("rdma-dest-bytes-truncated", new FuzzSeed().bytes(rdma).number(0, 6, 0).build());
        byte[] unknown = {9, 10, 11, ExtensionHeaders.NPATHS, 0, 4, 16, ExtensionHeaders.GEN_NUM, 0, 0, 0, 1, 0, 0, 0, 0};
        seeds.put("unknown-types-then-16", new FuzzSeed().bytes(unknown).number(0, 6, 1).number(-1, 17, 16)
                .anyLong(0).bool(false).build());
        FuzzSeed.check(ROOT + "ExtensionHeadersFuzzTestInputs/parseAndAdd", seeds);
    }

    static byte[] decoderSeed(int cap, int[] cuts, boolean direct, boolean little, int skipMask, byte[] stream) {
        FuzzSeed s = new FuzzSeed().number(0, FrameDecoderFuzzTest.CAPS.length - 1, cap).number(0, 12, cuts.length);
        for (int c : cuts) {
            s.number(0, 300, c);
        }
        return s.bool(direct).bool(little).anyInt(skipMask).bytes(stream).build();
    }

    static byte[] header(RdsHeader h) {
        ByteBuffer b = ByteBuffer.allocate(RdsHeader.SIZE);
        h.encode(b);
        return b.array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] firstStream(String pcap) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        PcapTcpStreams.read(Golden.resource(pcap + ".pcap")).directions().get(0).chunks.forEach(all::writeBytes);
        return all.toByteArray();
    }

    /** The distinct hex values of one column of golden/headers.tsv. */
    static Set<byte[]> goldenColumn(int column) {
        Set<String> hex = new LinkedHashSet<>();
        for (String line : new String(Golden.resource("headers.tsv"), java.nio.charset.StandardCharsets.US_ASCII)
                .split("\n")) {
            String[] f = line.split("\t");
            if (line.startsWith("#") || f.length <= column || f[0].equals("capture")) {
                continue;
            }
            hex.add(f[column]);
        }
        Set<byte[]> out = new LinkedHashSet<>();
        hex.forEach(x -> out.add(Golden.hex(x)));
        return out;
    }
}

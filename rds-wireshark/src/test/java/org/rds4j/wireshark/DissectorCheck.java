package org.rds4j.wireshark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.rds4j.core.wire.CodecFrames;
import org.rds4j.core.wire.CodecFrames.Frame;
import org.rds4j.core.wire.CodecFrames.Stream;
import org.rds4j.core.wire.RdsProtocolException;

/**
 * The check every capture goes through: tshark with rds.lua must report no malformed packet and no Lua error, and
 * for every TCP direction to or from the RDS port the messages it dissects (h_sequence, h_len, h_sport, h_dport,
 * h_flags, extension headers, kind) must be exactly those rds4j's codec reads from the same file, in order.
 */
public final class DissectorCheck {
    public static final int RDS_TCP_PORT = 16385;

    /** What a check found: the packets tshark reported and the streams the codec read. */
    public record Result(String capture, List<Tshark.Packet> packets, Map<String, Stream> codec, int frames) {
        public String summary() {
            long streams = codec.values().stream().filter(s -> !s.frames().isEmpty()).count();
            return capture + ": " + frames + " RDS frames in " + streams + " streams, tshark = codec, "
                    + packets.size() + " packets, no malformed packet, no Lua error";
        }
    }

    private DissectorCheck() {
    }

    public static Result check(Path tshark, Path capture, Path work, int rdsPort, String... tsharkOptions)
            throws IOException, InterruptedException, RdsProtocolException {
        return check(tshark, capture, work, rdsPort, false, tsharkOptions);
    }

    /**
     * As {@link #check(Path, Path, Path, int, String...)}; with {@code onlyFromStart}, the messages of connections
     * whose opening the capture missed are not compared (a live capture may begin in the middle of one, where
     * neither reader can find the message boundaries); malformed packets and Lua errors count everywhere.
     */
    public static Result check(Path tshark, Path capture, Path work, int rdsPort, boolean onlyFromStart,
            String... tsharkOptions) throws IOException, InterruptedException, RdsProtocolException {
        String name = capture.getFileName().toString();
        List<Tshark.Packet> packets = Tshark.dissect(tshark, capture, work, tsharkOptions);
        List<String> errors = new ArrayList<>();
        for (Tshark.Packet p : packets) {
            if (p.hasError()) {
                errors.add("packet " + p.number() + (p.malformed() ? " malformed" : "") + ": " + p.expertMessages()
                        + " [" + p.info() + "]");
            }
        }
        if (!errors.isEmpty()) {
            fail(name + ": tshark reports errors with rds.lua:\n  " + String.join("\n  ", errors));
        }

        Map<String, List<Frame>> dissected = new LinkedHashMap<>();
        for (Tshark.Packet p : packets) {
            if (!p.frames().isEmpty()) {
                dissected.computeIfAbsent(p.direction(), k -> new ArrayList<>()).addAll(p.frames());
            }
        }
        Map<String, Stream> codec = new LinkedHashMap<>(CodecFrames.read(Files.readAllBytes(capture), rdsPort));
        if (onlyFromStart) {
            for (Stream s : List.copyOf(codec.values())) {
                if (!s.fromStart()) {
                    codec.remove(s.name());
                    dissected.remove(s.name());
                }
            }
        }
        int frames = 0;
        for (Stream s : codec.values()) {
            List<Frame> got = dissected.getOrDefault(s.name(), List.of());
            assertEquals(s.frames(), got, name + " " + s.name() + ": the dissector's messages (tshark) against the"
                    + " codec's (" + s.holes() + " holes in the reassembled stream)");
            frames += got.size();
        }
        for (String direction : dissected.keySet()) {
            if (!codec.containsKey(direction)) {
                fail(name + ": tshark dissected RDS in " + direction + ", which the codec does not see as an RDS"
                        + " stream: " + dissected.get(direction));
            }
        }
        return new Result(name, packets, codec, frames);
    }
}

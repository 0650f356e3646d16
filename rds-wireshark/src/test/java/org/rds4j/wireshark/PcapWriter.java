package org.rds4j.wireshark;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a classic pcap file of raw IPv4 packets (link type 101) carrying one TCP connection, so that tests can put
 * on the wire what the golden captures lack: several extension headers in one message, rds4j's ack-only message,
 * unknown flags, lengths above 1 MiB, a header cut across segments. Checksums are left 0 (tshark does not verify
 * them by default). Timestamps advance 1 ms per packet, so the file is the same on every run.
 */
final class PcapWriter {
    private static final int SYN = 0x02;
    private static final int ACK = 0x10;
    private static final int PSH = 0x08;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final byte[] client;
    private final byte[] server;
    private final int clientPort;
    private final int serverPort;
    private long clientSeq = 1000;
    private long serverSeq = 5000;
    private int packets;

    PcapWriter(byte[] client, int clientPort, byte[] server, int serverPort) {
        this.client = client;
        this.clientPort = clientPort;
        this.server = server;
        this.serverPort = serverPort;
        ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0xA1B2C3D4).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(262144).putInt(101);
        out.writeBytes(h.array());
    }

    /** The three-way handshake, client first. */
    PcapWriter handshake() {
        segment(true, SYN, new byte[0]);
        clientSeq++;
        segment(false, SYN | ACK, new byte[0]);
        serverSeq++;
        segment(true, ACK, new byte[0]);
        return this;
    }

    /** One TCP segment from the client (or the server) carrying {@code data}. */
    PcapWriter send(boolean fromClient, byte[] data) {
        segment(fromClient, PSH | ACK, data);
        if (fromClient) {
            clientSeq += data.length;
        } else {
            serverSeq += data.length;
        }
        return this;
    }

    /** {@code data} cut into segments of at most {@code mss} bytes. */
    PcapWriter sendSegmented(boolean fromClient, byte[] data, int mss) {
        for (int off = 0; off < data.length; off += mss) {
            byte[] part = new byte[Math.min(mss, data.length - off)];
            System.arraycopy(data, off, part, 0, part.length);
            send(fromClient, part);
        }
        return this;
    }

    void write(Path file) throws IOException {
        Files.write(file, out.toByteArray());
    }

    private void segment(boolean fromClient, int flags, byte[] data) {
        int length = 20 + 20 + data.length;
        ByteBuffer ip = ByteBuffer.allocate(length);
        ip.put((byte) 0x45).put((byte) 0).putShort((short) length).putShort((short) packets).putShort((short) 0x4000)
                .put((byte) 64).put((byte) 6).putShort((short) 0)
                .put(fromClient ? client : server).put(fromClient ? server : client);
        ip.putShort((short) (fromClient ? clientPort : serverPort)).putShort((short) (fromClient ? serverPort
                : clientPort));
        ip.putInt((int) (fromClient ? clientSeq : serverSeq));
        ip.putInt((flags & ACK) != 0 ? (int) (fromClient ? serverSeq : clientSeq) : 0);
        ip.put((byte) 0x50).put((byte) flags).putShort((short) 65535).putShort((short) 0).putShort((short) 0);
        ip.put(data);
        ByteBuffer rec = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        rec.putInt(1_700_000_000).putInt(packets * 1000).putInt(length).putInt(length);
        out.writeBytes(rec.array());
        out.writeBytes(ip.array());
        packets++;
    }
}

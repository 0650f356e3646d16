package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.rds4j.EtimedoutException;
import org.rds4j.RdsConnectionInfo;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsPathInfo;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.wire.RdsHeader;

/**
 * A peer that resets its connection: what it wrote before the reset and our TCP acknowledged is delivered, although
 * it still sat unread in our socket and our own write to the peer failed first; and so is what it wrote on the
 * connection it opens next, while ours still looks up. A kernel peer frees a message once
 * TCP has acknowledged all of it and never sends it again, so a connection that closed at the failed write, with
 * bytes unread, lost those messages for good (docs/reliability.md, "The other direction").
 *
 * <p>The test sets up the worst order: the victim's writes to the peer are backed up (the peer reads nothing), and
 * the peer's last messages wait unread in the victim's socket, because the victim stopped reading the peer at its
 * {@code peerReceiveBytes} bound. When the reset comes, the write fails before anything reads.
 */
@EnabledOnOs(OS.LINUX)                              // reads TCP's queues from /proc/net/tcp{,6}
class PeerResetTest {
    private static final int RDS_PORT = 4000;
    private static final int PEER_RDS_PORT = 5000;
    private static final int SIZE = 8 * 1024;
    /** Messages the peer writes once the victim has stopped reading it: they wait in the victim's socket. */
    private static final int AFTER_THE_STOP = 4;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void messagesWaitingUnreadWhenThePeerResetsAreDeliveredThoughAWriteFailedFirst() throws Exception {
        InetAddress peerAddress = InetAddress.getByName("127.0.0.1");
        InetAddress victimAddress = InetAddress.getByName("127.0.0.2");
        int tcpPort = TcpHosts.freePort();
        try (RdsStack victim = RdsStack.create(RawPeer.victim(victimAddress, tcpPort).peerReceiveBytes(64 * 1024)
                .build());
             RdsSocket in = victim.openSocket();
             RdsSocket out = victim.openSocket();
             SocketChannel peer = SocketChannel.open()) {
            in.setOption(RdsSocketOptions.SO_RCVBUF, 4096);
            in.bind(new InetSocketAddress(victimAddress, RDS_PORT));
            out.setOption(RdsSocketOptions.SO_SNDBUF, 8 << 20);
            out.bind(new InetSocketAddress(victimAddress, RDS_PORT + 1));
            RawPeer.connect(peer, peerAddress, victimAddress, tcpPort);
            int peerPort = ((InetSocketAddress) peer.getLocalAddress()).getPort();

            // The peer writes until the victim stops reading it, then a few more, which wait in the victim's socket.
            // Each waits until the victim's TCP acknowledged all of it: the peer then holds nothing it could send
            // again, and never runs ahead of the victim's reading by more than one message.
            int written = 0;
            while (victim.counters().get("recv_peer_paused") == 0) {
                assertTrue(written < 10_000, "the victim never stopped reading the peer");
                writeAcknowledged(peer, ++written, peerPort, tcpPort);
            }
            for (int i = 0; i < AFTER_THE_STOP; i++) {
                writeAcknowledged(peer, ++written, peerPort, tcpPort);
            }

            // The victim's writes to the peer back up: 8 MiB that the peer never reads.
            ByteBuffer big = ByteBuffer.allocate(64 * 1024);
            InetSocketAddress peerRds = new InetSocketAddress(peerAddress, PEER_RDS_PORT);
            for (int i = 0; i < 128; i++) {
                big.clear();
                out.send(big, peerRds);
            }
            RawPeer.await(() -> backedUp(RawPeer.connectionFromPeer(victim)), WAIT,
                    () -> "the victim's writes back up: " + RawPeer.connectionFromPeer(victim));

            RdsConnectionInfo beforeReset = RawPeer.connectionFromPeer(victim);
            assertTrue(beforeReset.readingStopped(), "the last messages wait unread: " + beforeReset);
            // The reset: SO_LINGER 0, then close.
            peer.setOption(StandardSocketOptions.SO_LINGER, 0);
            peer.close();

            ByteBuffer dst = ByteBuffer.allocate(SIZE);
            RdsMessageInfo info = new RdsMessageInfo();
            in.setOption(RdsSocketOptions.SO_RCVTIMEO, WAIT);
            for (int i = 1; i <= written; i++) {
                dst.clear();
                int n;
                try {
                    n = in.receive(dst, info, 0);
                } catch (EtimedoutException e) {
                    throw new AssertionError("message " + i + " of " + written + " never arrived: lost", e);
                }
                assertEquals(SIZE, n, "message " + i + " of " + written);
                assertEquals(i, dst.getInt(0), "messages arrive in order, none lost");
            }
            System.out.printf("peer reset: %d messages written, the last %d unread at the reset, all delivered%n",
                    written, AFTER_THE_STOP);
        }
    }

    /**
     * The peer opens a second connection for its path while the victim still holds the first one up (it reconnects
     * after its own reset, and the victim has not read that reset yet), and sends on it at once. The victim keeps
     * the new connection unread until the old one closes, then reads it: a reset of the new connection would lose
     * the message, which the victim's TCP had acknowledged.
     */
    @Test
    void aConnectionThePeerOpensWhileItsOldOneIsUpIsReadOnceTheOldOneCloses() throws Exception {
        InetAddress peerAddress = InetAddress.getByName("127.0.0.1");
        InetAddress victimAddress = InetAddress.getByName("127.0.0.2");
        int tcpPort = TcpHosts.freePort();
        try (RdsStack victim = RdsStack.create(RawPeer.victim(victimAddress, tcpPort).build());
             RdsSocket in = victim.openSocket();
             SocketChannel old = SocketChannel.open();
             SocketChannel next = SocketChannel.open()) {
            in.bind(new InetSocketAddress(victimAddress, RDS_PORT));
            in.setOption(RdsSocketOptions.SO_RCVTIMEO, WAIT);
            RawPeer.connect(old, peerAddress, victimAddress, tcpPort);
            writeAcknowledged(old, 1, ((InetSocketAddress) old.getLocalAddress()).getPort(), tcpPort);
            ByteBuffer dst = ByteBuffer.allocate(SIZE);
            RdsMessageInfo info = new RdsMessageInfo();
            assertEquals(SIZE, in.receive(dst, info, 0));
            assertEquals(1, dst.getInt(0));

            RawPeer.connect(next, peerAddress, victimAddress, tcpPort);
            RawPeer.await(() -> victim.counters().get("conn_accept_deferred") == 1, WAIT,
                    () -> "the victim set the second connection aside: " + victim.counters());
            writeAcknowledged(next, 2, ((InetSocketAddress) next.getLocalAddress()).getPort(), tcpPort);
            assertEquals(0, victim.counters().get("conn_accept_refused"), "not refused");

            old.setOption(StandardSocketOptions.SO_LINGER, 0);
            old.close();
            dst.clear();
            try {
                assertEquals(SIZE, in.receive(dst, info, 0));
            } catch (EtimedoutException e) {
                throw new AssertionError("the message sent on the second connection never arrived: lost", e);
            }
            assertEquals(2, dst.getInt(0), "the message sent on the second connection");
        }
    }

    /** Writes data message {@code n} and waits until the victim's TCP acknowledged every byte of it. */
    private static void writeAcknowledged(SocketChannel ch, int n, int localPort, int remotePort) throws IOException {
        writeMessage(ch, n);
        RawPeer.await(() -> queues(localPort, remotePort).orElse(-1) == 0, WAIT,
                () -> "the victim's TCP acknowledged message " + n + ": " + queueLines(localPort));
    }

    /** Data message {@code n}, {@link #SIZE} bytes stamped with its number. */
    private static void writeMessage(SocketChannel ch, int n) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(RdsHeader.SIZE);
        RdsHeader h = new RdsHeader();
        h.sequence(n).length(SIZE).sourcePort(PEER_RDS_PORT).destinationPort(RDS_PORT);
        h.encode(header);
        header.flip();
        ByteBuffer payload = ByteBuffer.allocate(SIZE);
        payload.putInt(0, n);
        RawPeer.writeFully(ch, header, payload);
    }

    private static boolean backedUp(RdsConnectionInfo c) {
        // Messages left unwritten while others are out: the transport took what TCP would, and holds the rest.
        return c.paths().stream().mapToInt(RdsPathInfo::queuedMessages).sum() > 0
                && c.paths().stream().mapToInt(RdsPathInfo::unackedMessages).sum() > 0;
    }

    /**
     * The bytes of the TCP socket from {@code localPort} to {@code remotePort} that its peer has not acknowledged
     * (the {@code tx_queue} column of /proc/net/tcp and tcp6), if there is such a socket.
     */
    private static OptionalLong queues(int localPort, int remotePort) {
        String local = String.format(":%04X", localPort);
        String remote = String.format(":%04X", remotePort);
        for (String line : queueLines(localPort).split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length > 4 && f[1].endsWith(local) && f[2].endsWith(remote)) {
                return OptionalLong.of(Long.parseLong(f[4].substring(0, f[4].indexOf(':')), 16));
            }
        }
        return OptionalLong.empty();
    }

    /** The lines of /proc/net/tcp and tcp6 whose local or remote port is {@code port}. */
    private static String queueLines(int port) {
        String p = String.format(":%04X ", port);
        StringBuilder b = new StringBuilder();
        for (String file : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
            try {
                for (String line : Files.readAllLines(Path.of(file), StandardCharsets.US_ASCII)) {
                    if (line.contains(p)) {
                        b.append(line).append('\n');
                    }
                }
            } catch (IOException e) {
                b.append(file).append(": ").append(e).append('\n');
            }
        }
        return b.toString();
    }
}

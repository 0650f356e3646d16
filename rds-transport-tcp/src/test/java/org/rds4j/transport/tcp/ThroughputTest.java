package org.rds4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;

/** A rough measurement, printed: small messages through the sink and over loopback TCP. Asserts only completion. */
@Timeout(120)
class ThroughputTest {

    @AfterEach
    void noLeaks() {
        LeakRecorder.assertNoLeaks();
    }

    @Test
    void smallMessages() throws Exception {
        try (Stacks s = new Stacks()) {
            RecordingHandler[] p = s.connect();
            // Sender: the same 64-byte frame (48 header + 16 payload), 2 million times, as fast as the sink takes it.
            ByteBuffer[] frame = RecordingHandler.frame(1, new byte[16], 1);
            long count = 2_000_000;
            long total = count * 64;
            p[1].connection.close();
            // Reuse the client side by a second connection whose server side only counts bytes.
            CountingHandler counter = new CountingHandler();
            s.srvHost.acceptor = c -> counter;
            SendingHandler sender = new SendingHandler(frame, count);
            s.cli.connect(Stacks.CLIENT, Stacks.SERVER, -1, sender);
            long start = System.nanoTime();
            synchronized (counter) {
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (counter.bytes < total && System.nanoTime() < deadline) {
                    counter.wait(1000);
                }
            }
            long ns = System.nanoTime() - start;
            assertEquals(total, counter.bytes);
            System.out.printf("64-byte frames: %d in %.0f ms = %.2f M frames/s, %.0f MB/s, %d transmit calls%n",
                    count, ns / 1e6, count / (ns / 1e3), total / (ns / 1e3), sender.calls);
            sender.conn.close();
        }
    }

    private static final class SendingHandler implements ConnectionHandler {
        final ByteBuffer[] frame;
        long left;
        long calls;
        volatile TransportConnection conn;

        SendingHandler(ByteBuffer[] frame, long count) {
            this.frame = frame;
            this.left = count;
        }

        @Override
        public void onConnected(TransportConnection c) {
            conn = c;
            c.requestTransmit();
        }

        @Override
        public void onConnectFailed(Throwable cause) {
        }

        @Override
        public void onBytes(ByteBuffer data) {
            data.position(data.limit());
        }

        @Override
        public void transmit(FrameSink sink) {
            calls++;
            // like the core: a bounded batch per call, then ask again
            for (int i = 0; i < 1024 && left > 0 && sink.isWritable(); i++, left--) {
                sink.write(frame[0], frame[1]);
            }
            if (left > 0 && sink.isWritable()) {
                conn.requestTransmit();
            }
        }

        @Override
        public void onTransmitted(long streamOffset) {
        }

        @Override
        public void onClosed(Throwable cause) {
        }
    }

    private static final class CountingHandler implements ConnectionHandler {
        long bytes;

        @Override
        public void onConnected(TransportConnection c) {
        }

        @Override
        public void onConnectFailed(Throwable cause) {
        }

        @Override
        public synchronized void onBytes(ByteBuffer data) {
            bytes += data.remaining();
            data.position(data.limit());
            notifyAll();
        }

        @Override
        public void transmit(FrameSink sink) {
        }

        @Override
        public void onTransmitted(long streamOffset) {
        }

        @Override
        public void onClosed(Throwable cause) {
        }
    }
}

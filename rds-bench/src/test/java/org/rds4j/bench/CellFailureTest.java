package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A contender that delivers a wrong message fails its cell loudly, at once, and leaves nothing running. */
class CellFailureTest {

    @Test
    void aWrongSequenceNumberFailsTheCell() {
        CellResult r = new CellRunner(new Settings(0, 0, 0, true)).run(new QueueContender(5, false), 64);
        assertFalse(r.ok());
        assertTrue(r.error().contains("expected message 5, got message 1005"), r.error());
    }

    @Test
    void aWrongLengthFailsTheCell() {
        CellResult r = new CellRunner(new Settings(0, 0, 0, true)).run(new QueueContender(7, true), 64);
        assertFalse(r.ok());
        assertTrue(r.error().contains("message 7: expected 64 bytes, got 63"), r.error());
    }

    @Test
    void aCorrectContenderPasses() {
        CellResult r = new CellRunner(new Settings(0, 0, 0, true)).run(new QueueContender(-1, false), 64);
        assertTrue(r.ok(), r.error());
    }

    /** Messages through in-memory queues; message {@code bad} is altered (sequence number, or one byte short). */
    private static final class QueueContender implements Contender {
        private final long bad;
        private final boolean shorten;

        QueueContender(long bad, boolean shorten) {
            this.bad = bad;
            this.shorten = shorten;
        }

        @Override
        public String name() {
            return "queue";
        }

        @Override
        public String description() {
            return "in-memory queues";
        }

        @Override
        public Link open(int maxMessageSize) {
            BlockingQueue<ByteBuffer> toB = new ArrayBlockingQueue<>(1024);
            BlockingQueue<ByteBuffer> toA = new ArrayBlockingQueue<>(1024);
            QueueEndpoint a = new QueueEndpoint(toB, toA, bad, shorten);
            QueueEndpoint b = new QueueEndpoint(toA, toB, -1, false);
            return new Link() {
                @Override
                public Endpoint a() {
                    return a;
                }

                @Override
                public Endpoint b() {
                    return b;
                }

                @Override
                public void close() {
                    a.closed = true;
                    b.closed = true;
                }
            };
        }
    }

    private static final class QueueEndpoint implements Endpoint {
        private final BlockingQueue<ByteBuffer> out;
        private final BlockingQueue<ByteBuffer> in;
        private final long bad;
        private final boolean shorten;
        volatile boolean closed;

        QueueEndpoint(BlockingQueue<ByteBuffer> out, BlockingQueue<ByteBuffer> in, long bad, boolean shorten) {
            this.out = out;
            this.in = in;
            this.bad = bad;
            this.shorten = shorten;
        }

        @Override
        public void send(ByteBuffer message) throws IOException {
            ByteBuffer copy = ByteBuffer.allocate(message.remaining());
            copy.put(message).flip();
            if (copy.capacity() > 8 && copy.getLong(0) == bad) {
                if (shorten) {
                    copy.limit(copy.limit() - 1);
                } else {
                    copy.putLong(0, bad + 1000);
                }
            }
            try {
                while (!out.offer(copy, 10, TimeUnit.MILLISECONDS)) {
                    check();
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        }

        @Override
        public int receive(ByteBuffer dst) throws IOException {
            try {
                ByteBuffer m;
                while ((m = in.poll(10, TimeUnit.MILLISECONDS)) == null) {
                    check();
                }
                dst.clear();
                dst.put(m).flip();
                return dst.limit();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        }

        private void check() throws IOException {
            if (closed) {
                throw new IOException("closed");
            }
        }
    }
}

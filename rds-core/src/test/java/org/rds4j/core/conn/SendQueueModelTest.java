package org.rds4j.core.conn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.rds4j.RdsDatagram;
import org.rds4j.core.RdsCounters;

/**
 * {@link SendQueue} against a model of two plain lists (written and held, not yet written) and an inbox, under random
 * sequences of what a path does to it: senders pushing, the path adding its own messages, transmit passes that write
 * part of the queue (dropping what is not kept and what closed sockets queued), acknowledgements, resets, peer
 * restarts, cancels and purges. After every step the queue holds the same messages in the same order, with the same
 * numbers and flags, and every message that left it went to its owner exactly once, released chains in order and
 * properly cut. jqwik prints the seed of a failing run.
 */
class SendQueueModelTest {
    private static final InetAddress PEER = InetAddress.getLoopbackAddress();

    @Property(tries = 300)
    void theQueueBehavesAsTwoListsAndAnInbox(@ForAll long seed) {
        new Run(new Random(seed)).go(400);
    }

    /** One random run: the queue, its model, and two sockets that record what comes back to them. */
    private static final class Run {
        final Random random;
        final SendQueue queue = new SendQueue(PEER, new RdsCounters());
        final Owner[] owners = {new Owner(), new Owner()};
        final List<OutgoingMessage> inbox = new ArrayList<>();      // oldest first
        final List<OutgoingMessage> written = new ArrayList<>();
        final List<OutgoingMessage> unsent = new ArrayList<>();
        final List<OutgoingMessage> expectedBack = new ArrayList<>();
        long nextSeq = 1;
        int pongs;

        Run(Random random) {
            this.random = random;
        }

        void go(int steps) {
            for (int i = 0; i < steps; i++) {
                int op = random.nextInt(100);
                if (op < 30) {
                    push();
                } else if (op < 40) {
                    addOwn();
                } else if (op < 65) {
                    pass(random.nextInt(6));
                } else if (op < 82) {
                    release();
                } else if (op < 86) {
                    resend();
                } else if (op < 89) {
                    peerRestart();
                } else if (op < 93) {
                    cancel();
                } else if (op < 95) {
                    closeOrReopen();
                } else if (op < 97) {
                    dropProbes();
                } else {
                    failAll();
                }
                check(i);
            }
        }

        void push() {
            int n = 1 + random.nextInt(4);
            for (int i = 0; i < n; i++) {
                Owner o = owners[random.nextInt(2)];
                OutgoingMessage m = new OutgoingMessage(4000, 1 + random.nextInt(2), ByteBuffer.allocate(8), o, null,
                        false);
                queue.push(m);
                inbox.add(m);
            }
        }

        void takeInbox() {
            for (OutgoingMessage m : inbox) {
                unsent.add(m);
                expectNumber(m);
            }
            inbox.clear();
        }

        final List<Long> numbers = new ArrayList<>();
        final List<OutgoingMessage> numbered = new ArrayList<>();

        void expectNumber(OutgoingMessage m) {
            numbered.add(m);
            numbers.add(nextSeq++);
        }

        void addOwn() {
            int kind = random.nextInt(4);
            OutgoingMessage m = switch (kind) {
                case 0 -> OutgoingMessage.ping(4000);               // an acknowledgement ping: kept, dropped on reset
                case 1 -> OutgoingMessage.ackOnly();                // not kept once written
                case 2 -> OutgoingMessage.pong(4000, 8, 1);
                default -> OutgoingMessage.probe(8, 1);
            };
            if (kind == 2) {
                queue.pongQueued();
                pongs++;
            }
            if (kind == 3 && random.nextBoolean()) {
                queue.addAheadOfInbox(m);                           // the inbox stays behind it
                unsent.add(m);
                expectNumber(m);
            } else {
                queue.add(m);
                takeInbox();
                unsent.add(m);
                expectNumber(m);
            }
        }

        /** As {@link PathTransmitter}'s pass walks the queue: at most {@code max} messages written. */
        void pass(int max) {
            queue.takeInbox();
            takeInbox();
            OutgoingMessage prev = queue.lastSent();
            OutgoingMessage m = queue.firstUnsent();
            int wrote = 0;
            while (m != null && wrote < max) {
                OutgoingMessage next = m.next;
                assertSame(unsent.get(0), m, "the first unsent message");
                unsent.remove(0);
                if (m.owner != null && m.owner.isClosed()) {
                    queue.unlink(prev, m);
                    expectedBack.add(m);
                    m.owner.released(m, m, 1, m.length());
                } else {
                    wrote++;
                    if (m.retained) {
                        written.add(m);
                        prev = m;
                    } else {
                        queue.unlink(prev, m);
                        gone(m);
                    }
                }
                m = next;
            }
            queue.wrote(prev, m);
        }

        void release() {
            long top = nextSeq + 1;
            long seq = random.nextInt((int) Math.max(1, top));
            boolean any = false;
            while (!written.isEmpty() && Long.compareUnsigned(written.get(0).sequence, seq) <= 0) {
                OutgoingMessage m = written.remove(0);
                any = true;
                gone(m);
                if (m.owner != null) {
                    expectedBack.add(m);
                }
            }
            assertEquals(any, queue.releaseUpTo(seq), "whether releasing up to " + seq + " released anything");
        }

        void resend() {
            queue.requeueForResend();
            takeInbox();
            List<OutgoingMessage> all = new ArrayList<>();
            for (OutgoingMessage m : written) {
                if (!m.ackPing) {
                    assertTrue(m.retransmit, "a written message goes again marked retransmitted");
                    all.add(m);
                }
            }
            for (OutgoingMessage m : unsent) {
                if (!m.ackPing) {
                    all.add(m);
                }
            }
            written.clear();
            unsent.clear();
            unsent.addAll(all);
        }

        void peerRestart() {
            queue.flushForPeerRestart();
            takeInbox();
            for (OutgoingMessage m : written) {
                gone(m);
                if (m.owner != null) {
                    expectedBack.add(m);
                }
            }
            written.clear();
            unsent.removeIf(m -> m.ackPing);
            for (OutgoingMessage m : unsent) {
                assertFalse(m.retransmit, "the new peer never had it");
            }
        }

        void cancel() {
            Owner o = owners[random.nextInt(2)];
            int port = random.nextBoolean() ? -1 : 1 + random.nextInt(2);
            int n = port < 0 ? queue.purge(o) : queue.cancel(o, port);
            takeInbox();
            int expected = 0;
            for (List<OutgoingMessage> list : List.of(written, unsent)) {
                for (OutgoingMessage m : list) {
                    if (m.owner == o && (port < 0 || m.destinationPort == port)) {
                        expectedBack.add(m);
                        expected++;
                    }
                }
                list.removeIf(m -> m.owner == o && (port < 0 || m.destinationPort == port));
            }
            assertEquals(expected, n, "messages cancelled");
        }

        void closeOrReopen() {
            Owner o = owners[random.nextInt(2)];
            o.closed = !o.closed;
        }

        void dropProbes() {
            int n = queue.dropUnwrittenProbes();
            int before = unsent.size();
            unsent.removeIf(m -> !m.retransmit && m.owner == null && m.sourcePort() == ConnectionPath.PROBE_PORT
                    && !m.pong && !m.ackPing && m.destinationPort() == 0);
            assertEquals(before - unsent.size(), n, "probes dropped");
        }

        void failAll() {
            queue.failAll(RdsDatagram.Failure.CANCELLED);
            takeInbox();
            for (List<OutgoingMessage> list : List.of(written, unsent)) {
                for (OutgoingMessage m : list) {
                    gone(m);
                    if (m.owner != null) {
                        expectedBack.add(m);
                    }
                }
                list.clear();
            }
        }

        void gone(OutgoingMessage m) {
            if (m.pong) {
                pongs--;
            }
        }

        void check(int step) {
            String at = "after step " + step;
            assertEquals(written, SendQueueView.messages(queue, true), at + ": written and held");
            List<OutgoingMessage> expectedUnsent = new ArrayList<>(unsent);
            assertEquals(expectedUnsent, SendQueueView.messages(queue, false), at + ": not yet written");
            assertEquals(written.isEmpty() ? 0 : written.get(written.size() - 1).sequence, queue.newestSent(), at);
            assertEquals(!written.isEmpty(), queue.hasSent(), at);
            assertEquals(!unsent.isEmpty() || !inbox.isEmpty(), queue.hasUnsent(), at);
            assertEquals(pongs, queue.pongsHeld(), at + ": pongs held");
            for (int i = 0; i < numbered.size(); i++) {
                assertEquals((long) numbers.get(i), numbered.get(i).sequence,
                        at + ": the number of " + numbered.get(i));
            }
            long[] census = queue.census();
            assertEquals(unsent.size() + inbox.size(), census[0], at + ": census of queued");
            assertEquals(written.size(), census[2], at + ": census of written");
            List<OutgoingMessage> back = new ArrayList<>(owners[0].back);
            back.addAll(owners[1].back);
            assertEquals(expectedBack.size(), back.size(), at + ": messages given back to their sockets");
            assertTrue(back.containsAll(expectedBack), at + ": the right ones");
            if (inbox.isEmpty()) {
                assertEquals(written.size() + unsent.size(), queue.size(), at + ": size");
                OutgoingMessage oldest = !written.isEmpty() ? written.get(0) : unsent.isEmpty() ? null : unsent.get(0);
                assertEquals(oldest == null ? nextSeq : oldest.sequence, queue.oldestSeq(), at + ": oldest");
            }
        }
    }

    /** A socket that records what comes back, checking each released chain is whole and cut after its last. */
    private static final class Owner implements MessageOwner {
        final List<OutgoingMessage> back = new ArrayList<>();
        boolean closed;

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public void released(OutgoingMessage first, OutgoingMessage last, int count, long bytes) {
            int n = 0;
            long b = 0;
            long seq = -1;
            for (OutgoingMessage m = first; ; m = m.next) {
                assertSame(this, m.owner, "a released chain holds one socket's messages");
                assertTrue(Long.compareUnsigned(m.sequence, seq) > 0 || seq == -1, "in number order");
                seq = m.sequence;
                back.add(m);
                n++;
                b += m.length();
                if (m == last) {
                    assertNull(m.next, "the chain is cut after its last message");
                    break;
                }
                assertTrue(n < count, "the chain is longer than its count");
            }
            assertEquals(count, n, "released count");
            assertEquals(bytes, b, "released bytes");
        }

        @Override
        public void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason) {
            assertNull(message.next, "a failed message is out of every list");
            back.add(message);
        }

        @Override
        public void zeroCopyCompleted(int cookie) {
            throw new AssertionError("no zero-copy sends here");
        }
    }
}

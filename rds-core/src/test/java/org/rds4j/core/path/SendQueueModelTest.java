package org.rds4j.core.path;

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
import org.rds4j.core.stack.RdsCounters;

/**
 * {@link SendQueue} against a model of two plain lists (written and held, not yet written) and an inbox, under random
 * sequences of what a path does to it: senders pushing, the path adding its own messages, transmit passes that write
 * part of the queue (dropping what is not kept and what closed sockets queued), acknowledgements, resets, peer
 * restarts, cancels and purges; some entries are runs of messages ({@link MessageRun}), which senders append to
 * while they wait in the inbox. After every step the queue holds the same messages in the same order, with the same
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
        /** How many messages each entry carries, as the model counts them: more than one for a run. */
        final java.util.Map<OutgoingMessage, Integer> carries = new java.util.IdentityHashMap<>();

        Run(Random random) {
            this.random = random;
        }

        void go(int steps) {
            for (int i = 0; i < steps; i++) {
                int op = random.nextInt(100);
                if (op < 25) {
                    push();
                } else if (op < 30) {
                    appendToRun();
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
                OutgoingMessage m;
                if (random.nextBoolean()) {
                    m = new OutgoingMessage(4000, 1 + random.nextInt(2), ByteBuffer.allocate(8), o, null, false);
                } else {                                             // the first of a run, which may grow
                    m = new OutgoingMessage().fillRun(4000, 1 + random.nextInt(2), payload(), o, 64);
                }
                carries.put(m, 1);
                queue.push(m);
                inbox.add(m);
            }
        }

        ByteBuffer payload() {
            return ByteBuffer.allocate(random.nextInt(12));
        }

        /**
         * A sender appends to a run: one still in the inbox takes it unless its 64 bytes are full; one the path has
         * taken in (numbered) refuses, and so does an entry that is not a run.
         */
        void appendToRun() {
            List<OutgoingMessage> candidates = random.nextInt(4) == 0 ? numbered : inbox;
            if (candidates.isEmpty()) {
                return;
            }
            OutgoingMessage m = candidates.get(random.nextInt(candidates.size()));
            long before = m.length();
            ByteBuffer p = payload();
            int answer = m.append(p, false);
            boolean open = inbox.contains(m) && m.isRun;
            if (open && before + p.remaining() <= 64 && k(m) < MessageRun.MAX_ENTRIES) {
                assertEquals(OutgoingMessage.APPENDED, answer, "an open run takes the message");
                carries.merge(m, 1, Integer::sum);
                assertEquals(before + p.remaining(), m.length(), "the run's bytes");
            } else {
                assertTrue(answer != OutgoingMessage.APPENDED, "a full, taken or plain entry refuses");
                assertEquals(before, m.length(), "and stays as it was");
            }
            assertEquals(k(m), m.entries(), "the messages it carries");
        }

        int k(OutgoingMessage m) {
            return carries.getOrDefault(m, 1);
        }

        int total(List<OutgoingMessage> list) {
            int n = 0;
            for (OutgoingMessage m : list) {
                n += k(m);
            }
            return n;
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
            numbers.add(nextSeq);
            nextSeq += k(m);                                  // a run takes a number per message
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
                    m.owner.released(m, m, 1, k(m), m.length());
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
            while (!written.isEmpty()                               // a run goes once its last message is in
                    && Long.compareUnsigned(written.get(0).sequence + k(written.get(0)) - 1, seq) <= 0) {
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
                        expected += k(m);
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
            OutgoingMessage newest = written.isEmpty() ? null : written.get(written.size() - 1);
            assertEquals(newest == null ? 0 : newest.sequence + k(newest) - 1, queue.newestSent(), at);
            assertEquals(!written.isEmpty(), queue.hasSent(), at);
            assertEquals(!unsent.isEmpty() || !inbox.isEmpty(), queue.hasUnsent(), at);
            assertEquals(pongs, queue.pongsHeld(), at + ": pongs held");
            for (int i = 0; i < numbered.size(); i++) {
                assertEquals((long) numbers.get(i), numbered.get(i).sequence,
                        at + ": the number of " + numbered.get(i));
            }
            long[] census = queue.census();
            assertEquals(total(unsent) + total(inbox), census[0], at + ": census of queued");
            assertEquals(total(written), census[2], at + ": census of written");
            List<OutgoingMessage> back = new ArrayList<>(owners[0].back);
            back.addAll(owners[1].back);
            assertEquals(expectedBack.size(), back.size(), at + ": messages given back to their sockets");
            assertTrue(back.containsAll(expectedBack), at + ": the right ones");
            if (inbox.isEmpty()) {
                assertEquals(total(written) + total(unsent), queue.size(), at + ": messages held");
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
        public void released(OutgoingMessage first, OutgoingMessage last, int entries, int count, long bytes) {
            int n = 0;
            int messages = 0;
            long b = 0;
            long seq = -1;
            for (OutgoingMessage m = first; ; m = m.next) {
                assertSame(this, m.owner, "a released chain holds one socket's messages");
                assertTrue(Long.compareUnsigned(m.sequence, seq) > 0 || seq == -1, "in number order");
                seq = m.sequence;
                back.add(m);
                n++;
                messages += m.entries();
                b += m.length();
                if (m == last) {
                    assertNull(m.next, "the chain is cut after its last message");
                    break;
                }
                assertTrue(n < entries, "the chain is longer than its count");
            }
            assertEquals(entries, n, "released entries");
            assertEquals(count, messages, "released messages");
            assertEquals(bytes, b, "released bytes");
        }

        @Override
        public void failed(OutgoingMessage message, InetSocketAddress destination, RdsDatagram.Failure reason,
                       String why) {
            assertNull(message.next, "a failed message is out of every list");
            back.add(message);
        }

        @Override
        public void zeroCopyCompleted(int cookie) {
            throw new AssertionError("no zero-copy sends here");
        }
    }
}

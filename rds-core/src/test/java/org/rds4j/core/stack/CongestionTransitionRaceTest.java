package org.rds4j.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.cong.CongestionMap;

/**
 * docs/protocol.md, "Congestion maps" (net/rds/recv.c, `rds_recv_rcvbuf_delta`): the kernel flips a socket's congestion state and the port's bit in
 * the local map together, under the socket's receive lock, so the map always says what the socket's queue says. A
 * port whose queue is above the budget must be marked congested, whatever threads deliver and read.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CongestionTransitionRaceTest {

    /**
     * A reader that drains below budget/2 used to decide "uncongested" under the socket's lock but clear the map bit
     * after releasing it; a delivery in between refilled the queue above the budget, found the bit still set (no
     * change, no map sent), and then the reader's late clear won: the socket believed it was congested, the map said
     * it was not, and senders were never stopped again. Now the bit changes under the socket's lock.
     *
     * <p>The test holds the map's monitor, so the reader stops exactly at the bit (inside the socket's lock), and a
     * delivery on another thread must wait for it; when the monitor is released both complete, and the map must
     * agree with the queue. Every socket call runs on its own thread with a bounded wait: a lock that is never
     * released fails the test instead of hanging it.
     */
    @Test
    void aDeliveryBetweenTheReadersDecisionAndItsMapUpdateMustLeaveThePortCongested() throws Exception {
        InetAddress local = InetAddress.getByName("10.77.0.2");
        InetSocketAddress peer = new InetSocketAddress("10.77.0.1", 4001);
        try (CoreStack stack = new CoreStack(RdsStackConfig.builder().name("race").address(local).build())) {
            CapturingTransport.install(stack);
            RdsSocket s = stack.openSocket();
            s.setOption(RdsSocketOptions.SO_RDS_TRANSPORT, CapturingTransport.NAME);
            s.setOption(RdsSocketOptions.SO_RCVBUF, 4000);           // budget 4000, uncongested below 2000
            s.bind(new InetSocketAddress(local, 4000));
            CongestionMap map = stack.localMap(local);

            stack.deliver(local, 4000, peer, ByteBuffer.allocate(3000));
            stack.deliver(local, 4000, peer, ByteBuffer.allocate(3000));   // 6000 > 4000: congested
            assertTrue(map.isCongested(4000));
            s.receive();                                              // 3000 left: still congested
            assertTrue(map.isCongested(4000));

            CompletableFuture<Void> reader;
            CompletableFuture<Void> refill;
            synchronized (map) {
                Thread[] t = new Thread[1];
                reader = CompletableFuture.runAsync(() -> {
                    t[0] = Thread.currentThread();
                    try {
                        s.receive();                                  // 0 left: uncongested, clears the bit
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (t[0] == null || t[0].getState() != Thread.State.BLOCKED) {
                    assertTrue(System.nanoTime() < deadline, "the reader never reached the map");
                    LockSupport.parkNanos(100_000);
                }
                // The reader has decided "uncongested" and waits for the bit. Refill above the budget meanwhile.
                refill = CompletableFuture.runAsync(() -> {
                    stack.deliver(local, 4000, peer, ByteBuffer.allocate(3000));
                    stack.deliver(local, 4000, peer, ByteBuffer.allocate(3000));
                });
            }
            refill.get(10, TimeUnit.SECONDS);
            reader.get(10, TimeUnit.SECONDS);
            assertEquals(6000, stack.counters().get("recv_bytes_added_to_sock")
                    - stack.counters().get("recv_bytes_freed_fromsock"), "6000 bytes queued, above the budget");
            assertTrue(map.isCongested(4000),
                    "6000 unread bytes > budget 4000, but the port is not marked congested in the local map");
            for (int i = 0; i < 10; i++) {
                stack.deliver(local, 4000, peer, ByteBuffer.allocate(3000));
            }
            assertTrue(map.isCongested(4000), "still unmarked with 36000 unread bytes: senders are never stopped");
            assertTrue(s.receive(Duration.ZERO).isPresent());
        }
    }
}

package org.rds4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** One holder reused for every receive: each fill says only what the latest message says, whatever came before. */
class RdsMessageInfoTest {
    private static final InetSocketAddress A = new InetSocketAddress("127.0.0.1", 4000);
    private static final InetSocketAddress B = new InetSocketAddress("127.0.0.2", 4001);

    @Test
    void dataAfterANotificationIsDataWithNothingOfTheNotificationLeft() {
        RdsMessageInfo info = new RdsMessageInfo();
        info.set(RdsDatagram.sendFailed(B, 77, RdsDatagram.Failure.CANCELLED, 5), false);
        assertEquals(RdsDatagram.Kind.SEND_FAILED, info.kind());
        assertSame(RdsDatagram.Failure.CANCELLED, info.failure());

        info.setData(A, 9000, 64, false, 10);
        assertEquals(RdsDatagram.Kind.DATA, info.kind());
        assertNull(info.failure());
        assertSame(A, info.source());
        assertEquals(9000, info.destinationPort());
        assertEquals(64, info.length());
        assertFalse(info.truncated());
        assertEquals(10, info.arrivalNanos());
        assertEquals(0, info.zeroCopyCookieCount());
        assertEquals(0, info.congestionMask());

        info.set(RdsDatagram.zeroCopyCompletion(new int[] {7, 8}, 11), false);
        assertEquals(2, info.zeroCopyCookieCount());
        info.setData(B, 9001, 2000, true, 12);
        assertEquals(RdsDatagram.Kind.DATA, info.kind());
        assertEquals(0, info.zeroCopyCookieCount());
        assertSame(B, info.source());
        assertTrue(info.truncated());
    }

    @Test
    void aRepeatedSourceAndANewOneAreEachReportedAsGiven() {
        RdsMessageInfo info = new RdsMessageInfo();
        info.setData(A, 1, 1, false, 1);
        info.setData(A, 2, 2, false, 2);
        assertSame(A, info.source());
        assertEquals(2, info.destinationPort());
        info.setData(B, 3, 3, false, 3);
        assertSame(B, info.source());
        info.set(RdsDatagram.congestionUpdate(1L << 5, 4), false);
        assertEquals(1L << 5, info.congestionMask());
        info.setData(B, 4, 4, false, 4);
        assertEquals(0, info.congestionMask());
        assertEquals(RdsDatagram.Kind.DATA, info.kind());
    }
}

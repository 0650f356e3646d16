package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** rds4j ping without the network: its options, the route's source address, and its lines. */
class PingCommandTest {
    private static PingCommand.Options options(String... argv) throws UsageException, IOException {
        PingCommand ping = new PingCommand();
        return PingCommand.options(Args.parse(argv, ping.valueOptions(), ping.flagOptions()));
    }

    private static InetAddress ip(String text) throws IOException {
        return InetAddress.getByName(text);
    }

    /** Connecting a UDP socket sends nothing; it only asks the kernel which route and source it would use. */
    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "127.0.0.2", "127.0.0.200", "127.1.2.3"})
    void aLoopbackDestinationIsReachedFrom127001(String destination) throws IOException {
        assertEquals(ip("127.0.0.1"), Endpoints.routeSource(ip(destination)));
    }

    @Test
    void ipv6LoopbackIsReachedFromItself() throws IOException {
        assumeTrue(ipv6(), "no IPv6 on this machine");
        assertEquals(ip("::1"), Endpoints.routeSource(ip("::1")));
    }

    @Test
    void withoutIOrBindTheSourceIsTheRoutesAndTheDefaultsAreRdsPings() throws Exception {
        PingCommand.Options o = options("127.0.0.2");
        assertEquals(ip("127.0.0.2"), o.target());
        assertEquals(ip("127.0.0.1"), o.source());
        assertEquals(0, o.count()); // until killed
        assertEquals(TimeUnit.SECONDS.toNanos(1), o.intervalNanos());
        assertEquals(TimeUnit.SECONDS.toNanos(1), o.timeoutNanos());
        if (ipv6()) {
            assertEquals(ip("::1"), options("::1").source());
        }
    }

    @Test
    void rdsPingsShortOptions() throws Exception {
        PingCommand.Options o = options("-c", "3", "-i", "0.2", "-I", "127.0.0.5", "127.0.0.2");
        assertEquals(3, o.count());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(200), o.intervalNanos());
        assertEquals(TimeUnit.SECONDS.toNanos(1), o.timeoutNanos()); // the interval, at least 1 s
        assertEquals(ip("127.0.0.5"), o.source());

        o = options("-c5", "-i250msec", "-I127.0.0.1", "127.0.0.2");
        assertEquals(5, o.count());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(250), o.intervalNanos());
        assertEquals(ip("127.0.0.1"), o.source());

        o = options("-i", "2.5", "127.0.0.2");
        assertEquals(TimeUnit.MILLISECONDS.toNanos(2500), o.timeoutNanos()); // one interval when that is longer
    }

    @Test
    void longOptionsStillWork() throws Exception {
        PingCommand.Options o = options("--count", "4", "--interval", "300", "--timeout", "60000", "--bind",
                "127.0.0.3", "127.0.0.2");
        assertEquals(4, o.count());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(300), o.intervalNanos());
        assertEquals(TimeUnit.SECONDS.toNanos(60), o.timeoutNanos());
        assertEquals(ip("127.0.0.3"), o.source());
        // Short and long options mix when they say different things.
        o = options("-c", "2", "--interval", "10", "--bind", "127.0.0.1", "127.0.0.2");
        assertEquals(2, o.count());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(10), o.intervalNanos());
    }

    @ParameterizedTest
    @CsvSource({"0, 0", "7, 7", "1k, 1024", "2K, 2048", "1m, 1048576", "1g, 1073741824"})
    void countAsRdsPingReadsIt(String text, long expected) throws UsageException {
        assertEquals(expected, PingCommand.parseCount(text));
    }

    @ParameterizedTest
    @CsvSource({"1, 1000000000", "0.2, 200000000", "200ms, 200000000", "200msec, 200000000", "50us, 50000",
        "50usec, 50000", "0, 0", "1.5msec, 1500000"})
    void intervalAsRdsPingReadsIt(String text, long nanos) throws UsageException {
        assertEquals(nanos, PingCommand.parseInterval(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "-c x 127.0.0.2", "-c -1 127.0.0.2", "-c 1t 127.0.0.2", "-c 1 --count 1 127.0.0.2", "--count 0 127.0.0.2",
        "-i x 127.0.0.2", "-i 5s 127.0.0.2", "-i -1 127.0.0.2", "-i 1d 127.0.0.2", "-i NaN 127.0.0.2",
        "-i 7200 127.0.0.2", "-i 1 --interval 1000 127.0.0.2", "-I 127.0.0.1 --bind 127.0.0.1 127.0.0.2",
        "-I ::1 127.0.0.2", "-I 127.0.0.1 ::1", "--timeout 0 127.0.0.2", "-q 127.0.0.2", "127.0.0.2 127.0.0.3",
    })
    void mistakesAreUsageErrors(String line) {
        assertThrows(UsageException.class, () -> options(line.split(" ")));
    }

    @Test
    void replyLinesAreRdsPings() throws IOException {
        InetAddress target = ip("127.0.0.2");
        // rds-ping: printf(" %3u:", n), then " %ld usec", " (from)" if not the destination, " DUP!".
        assertEquals("   1: 464 usec", PingCommand.replyLine(1, 464_000, target, target, false));
        assertEquals("  12: 0 usec", PingCommand.replyLine(12, 400, target, target, false));
        assertEquals(" 123: 1500 usec", PingCommand.replyLine(123, 1_499_600, target, target, false));
        assertEquals(" 1234: 7 usec", PingCommand.replyLine(1234, 7_000, target, target, false));
        assertEquals("   2: 10 usec DUP!", PingCommand.replyLine(2, 10_000, target, target, true));
        assertEquals("   3: 5 usec (fd00::3)", PingCommand.replyLine(3, 5_000, ip("fd00::3"), ip("fd00::2"),
                false));
        assertEquals("   4: ERROR: no buffer space", PingCommand.errorLine(4, "no buffer space"));
    }

    @Test
    void summaryLine() throws IOException {
        PingCommand.Stats s = new PingCommand.Stats(ip("::1"), ip("0:0:0:0:0:0:0:1"));
        s.sent = 4;
        s.reply(152_000);
        s.reply(464_000);
        s.reply(308_000);
        assertEquals("ping: 4 sent, 3 received, 25% loss, min/avg/max 152/308/464 usec, ::1 to ::1", s.summary());
        PingCommand.Stats none = new PingCommand.Stats(ip("127.0.0.1"), ip("127.0.0.3"));
        none.sent = 2;
        assertEquals("ping: 2 sent, 0 received, 100% loss, min/avg/max 0/0/0 usec, 127.0.0.1 to 127.0.0.3",
                none.summary());
    }

    /** Whether this machine has IPv6 loopback: the route to ::1 can be asked for. */
    static boolean ipv6() {
        try (DatagramChannel c = DatagramChannel.open(StandardProtocolFamily.INET6)) {
            c.connect(new java.net.InetSocketAddress(ip("::1"), 1));
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}

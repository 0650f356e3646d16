package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ArgsTest {
    private static final Set<String> VALUES = Set.of("count", "bind", "duration");
    private static final Set<String> FLAGS = Set.of("expect-echo");

    private static Args parse(String... argv) throws UsageException {
        return Args.parse(argv, VALUES, FLAGS);
    }

    @Test
    void valuesFlagsAndPositionals() throws UsageException {
        Args a = parse("--count", "5", "--bind=127.0.0.1:4000", "--expect-echo", "host", "--", "--count");
        assertEquals(5, a.intValue("count", 0, 0, 10));
        assertEquals("127.0.0.1:4000", a.string("bind", null));
        assertTrue(a.flag("expect-echo"));
        assertFalse(a.help());
        assertEquals(List.of("host", "--count"), a.positionals());
        assertEquals(7, a.intValue("missing", 7, 0, 10));
    }

    @Test
    void helpIsAlwaysAccepted() throws UsageException {
        assertTrue(parse("-h").help());
        assertTrue(parse("--count", "1", "--help").help());
    }

    @Test
    void mistakesAreUsageErrors() {
        assertThrows(UsageException.class, () -> parse("--bogus"));
        assertThrows(UsageException.class, () -> parse("-x"));
        assertThrows(UsageException.class, () -> parse("--count"));
        assertThrows(UsageException.class, () -> parse("--count", "1", "--count", "2"));
        assertThrows(UsageException.class, () -> parse("--expect-echo=yes"));
        assertThrows(UsageException.class, () -> parse("--count", "x").intValue("count", 0, 0, 10));
        assertThrows(UsageException.class, () -> parse("--count", "11").intValue("count", 0, 0, 10));
        assertThrows(UsageException.class, () -> parse("--duration", "-1").secondsAsNanos("duration", 1, 0, 10));
        assertThrows(UsageException.class, () -> parse().required("bind"));
        assertThrows(UsageException.class, () -> parse("a", "b").expectPositionals(1, 1));
        assertThrows(UsageException.class, () -> parse().expectPositionals(1, 1));
    }

    @Test
    void fractionalSeconds() throws UsageException {
        assertEquals(1_500_000_000L, parse("--duration", "1.5").secondsAsNanos("duration", 10, 0, 100));
        assertEquals(10_000_000_000L, parse().secondsAsNanos("duration", 10, 0, 100));
    }

    @Test
    void endpoints() throws UsageException {
        assertEquals(new InetSocketAddress("127.0.0.2", 4000), Endpoints.parse("bind", "127.0.0.2:4000"));
        assertEquals(new InetSocketAddress("::1", 18), Endpoints.parse("bind", "[::1]:18"));
        assertEquals("[::1]:18", Endpoints.format(Endpoints.parse("bind", "[::1]:18")));
        assertEquals("127.0.0.2:4000", Endpoints.format(Endpoints.parse("bind", "127.0.0.2:4000")));
        assertThrows(UsageException.class, () -> Endpoints.parse("bind", "127.0.0.1"));
        assertThrows(UsageException.class, () -> Endpoints.parse("bind", "127.0.0.1:70000"));
        assertThrows(UsageException.class, () -> Endpoints.parse("bind", "127.0.0.1:x"));
        assertThrows(UsageException.class, () -> Endpoints.parse("bind", "::1:4000"));
        assertThrows(UsageException.class, () -> Endpoints.parse("bind", ":4000"));
    }

    @Test
    void oneLetterOptionsAsGetoptSpellsThem() throws UsageException {
        Set<String> values = Set.of("count", "bind", "c", "i", "I");
        Args a = Args.parse(new String[] {"-c", "3", "-i0.2", "-I", "::1", "--count", "4", "host"}, values, FLAGS);
        assertEquals("3", a.string("c", null));
        assertEquals("0.2", a.string("i", null));
        assertEquals("::1", a.string("I", null));
        assertEquals(4, a.intValue("count", 0, 0, 10));
        assertEquals(List.of("host"), a.positionals());
        assertFalse(a.has("bind"));
        // -i and -I are different options, as in rds-ping.
        assertThrows(UsageException.class, () -> Args.parse(new String[] {"-C", "3"}, values, FLAGS));
        assertThrows(UsageException.class, () -> Args.parse(new String[] {"-c"}, values, FLAGS));
        assertThrows(UsageException.class, () -> Args.parse(new String[] {"-c", "1", "-c2"}, values, FLAGS));
        assertThrows(UsageException.class, () -> Args.parse(new String[] {"--c", "1"}, values, FLAGS));
        assertThrows(UsageException.class, () -> Args.parse(new String[] {"--c=1"}, values, FLAGS));
        UsageException e = assertThrows(UsageException.class,
                () -> Args.parse(new String[] {"-c", "x"}, values, FLAGS).intValue("c", 0, 0, 10));
        assertTrue(e.getMessage().startsWith("option -c "), e.getMessage());
    }
}

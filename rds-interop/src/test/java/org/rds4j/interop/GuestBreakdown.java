package org.rds4j.interop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Tells a guest that broke down under qemu's emulation from a verdict on rds4j, and stops the suite from waiting on
 * it. A guest has broken down when its kernel panicked, when its virtio NIC stopped transmitting (the kernel's
 * {@code NETDEV WATCHDOG} on its console), or when its network answers nothing at all, not even an ICMP echo: a
 * 6.1 guest's NIC has also gone silent both ways with no line on the console. None of these can come of what a peer
 * on the network sends, and the guest never recovers from them.
 *
 * <p>Before each scenario: a guest found broken fails the scenario at once, with the evidence; every later one would
 * otherwise wait out its own timeouts, a minute or more each, and the suite take an hour to say what its first
 * failure said. After a failed scenario: the guest is looked at again, so a breakdown during the suite's last scenario
 * is recorded too. The first breakdown found is written to the file named by the {@code rds4j.guestBreakdown} system
 * property, which {@code .ci/run} reads to run the suite again in a fresh guest.
 */
final class GuestBreakdown implements BeforeTestExecutionCallback, AfterTestExecutionCallback {
    /** The console lines that mean the guest broke; {@code .ci/run} matches the same two. */
    static final Pattern BREAKDOWN = Pattern.compile("Kernel panic|NETDEV WATCHDOG");
    /** How many ICMP echoes the guest may leave unanswered, one second each, before its network counts as gone. */
    private static final int ECHOES = 3;

    /** What the suite already found; once found, a guest stays broken. */
    private static volatile String found;

    @Override
    public void beforeTestExecution(ExtensionContext context) {
        String broken = look();
        if (broken != null) {
            throw new AssertionError("the guest broke down before this scenario, which was not run against it: "
                    + broken);
        }
    }

    @Override
    public void afterTestExecution(ExtensionContext context) {
        if (context.getExecutionException().isPresent()) {
            look();                                 // the scenario's own failure stands; this only records a cause
        }
    }

    /** The breakdown found, now or earlier, recorded for {@code .ci/run}; null while the guest is sound. */
    private static synchronized String look() {
        if (found != null || !Guest.available()) {
            return found;
        }
        String console = System.getenv("RDS4J_CONSOLE_LOG");
        String broken = console == null ? null
                : firstSign(Path.of(console)).map(l -> l.strip() + " (the guest's console, " + console + ")")
                        .orElse(null);
        if (broken == null && !answersEcho(Guest.address())) {
            // The guest's own counters (busybox has no ip -s): which way its NIC stopped, and whether it still
            // takes interrupts.
            broken = Guest.address() + " answered none of " + ECHOES + " ICMP echoes. Its NIC as the guest sees it:\n"
                    + Guest.run("cat /proc/net/dev; grep -i virtio /proc/interrupts", Duration.ofSeconds(20))
                            .output();
        }
        if (broken != null) {
            found = broken;
            record(broken);
        }
        return broken;
    }

    /** The first console line that says the guest broke down, if one does; the harness's command echoes are not. */
    static Optional<String> firstSign(Path console) {
        try {
            return Files.readString(console, StandardCharsets.ISO_8859_1).lines()
                    .filter(l -> !l.startsWith("RDSCMD") && BREAKDOWN.matcher(l).find())
                    .findFirst();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the guest's console log " + console, e);
        }
    }

    /** Whether the guest answers an ICMP echo (this JVM runs as root, so the JDK sends real ones). */
    private static boolean answersEcho(String address) {
        try {
            InetAddress guest = InetAddress.getByName(address);
            for (int i = 0; i < ECHOES; i++) {
                if (guest.isReachable(1_000)) {
                    return true;
                }
            }
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send an ICMP echo to the guest at " + address, e);
        }
    }

    private static void record(String broken) {
        String file = System.getProperty("rds4j.guestBreakdown");
        if (file == null) {
            return;
        }
        try {
            Files.writeString(Path.of(file), broken + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record the guest's breakdown in " + file, e);
        }
    }
}

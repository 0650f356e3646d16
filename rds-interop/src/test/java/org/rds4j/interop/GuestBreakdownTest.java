package org.rds4j.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which guest console logs {@link GuestBreakdown} reads as a guest that broke down. */
class GuestBreakdownTest {
    @TempDir
    Path dir;

    @Test
    void aNicThatStoppedTransmittingIsABreakdown() throws IOException {
        Path console = write("[   12.5] rds4j-guest: ready\n"
                + "[  253.866549] virtio_net virtio0 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5120 ms\n"
                + "[  258.986149] virtio_net virtio0 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 10240 ms\n");
        assertEquals(Optional.of("[  253.866549] virtio_net virtio0 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 "
                + "timed out 5120 ms"), GuestBreakdown.firstSign(console));
    }

    @Test
    void aPanicIsABreakdown() throws IOException {
        Path console = write("[  90.1] traps: double fault\n[  90.2] Kernel panic - not syncing: Fatal exception\n");
        assertEquals(Optional.of("[  90.2] Kernel panic - not syncing: Fatal exception"),
                GuestBreakdown.firstSign(console));
    }

    @Test
    void aWarningOfRdsIsNot() throws IOException {
        // The scenarios judge the guest's complaints about RDS themselves; they are verdicts on rds4j, not breakdowns.
        Path console = write("[  40.0] RDS/TCP: unknown message type\n[  41.0] WARNING: CPU: 0 PID: 7 at net/rds/tcp.c\n");
        assertEquals(Optional.empty(), GuestBreakdown.firstSign(console));
    }

    @Test
    void theHarnessEchoingACommandIsNot() throws IOException {
        Path console = write("RDSCMD 1-2-3 start: dmesg | grep 'NETDEV WATCHDOG'\n[  50.0] rds4j-guest: ok\n");
        assertEquals(Optional.empty(), GuestBreakdown.firstSign(console));
    }

    @Test
    void noConsoleYetIsNot() {
        assertEquals(Optional.empty(), GuestBreakdown.firstSign(dir.resolve("console.log")));
    }

    private Path write(String text) throws IOException {
        return Files.writeString(dir.resolve("console.log"), text);
    }
}

package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code --pin} of bench and stress: the CPU list parsing, and real placement through taskset where the machine allows it. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadPlacementTest {

    @Test
    void allowedCpusAreReadFromTheStatusLine() {
        String status = "Name:\tjava\nCpus_allowed:\t4f\nCpus_allowed_list:\t0-3,6\nMems_allowed_list:\t0\n";
        assertEquals(List.of(0, 1, 2, 3, 6), ThreadPlacement.allowedCpus(status));
        assertEquals(List.of(5), ThreadPlacement.allowedCpus("Cpus_allowed_list:\t5\n"));
        assertThrows(IllegalStateException.class, () -> ThreadPlacement.allowedCpus("Name:\tjava\n"));
    }

    /**
     * A thread named like a side's I/O thread and a thread that places itself end up on their sides' CPUs, as the
     * kernel reports them ({@code Cpus_allowed_list} of each thread). Skipped where placement cannot work: not Linux,
     * no taskset, fewer than two CPUs.
     */
    @Test
    void threadsArePlacedOnTheirSidesCpus() throws Exception {
        ThreadPlacement placement = placementOrSkip();
        CountDownLatch named = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        AtomicLong namedId = new AtomicLong();
        Thread io = new Thread(() -> {
            namedId.set(ThreadPlacement.ownThreadId());
            named.countDown();
            try {
                done.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "pintest-b-io-with-a-long-name");
        AtomicReference<String> selfPlaced = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                placement.pinCallingThread(true);
                selfPlaced.set(cpusOf(ThreadPlacement.ownThreadId()));
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "pintest-a-worker");
        io.start();
        try {
            assertTrue(named.await(10, TimeUnit.SECONDS), "the named thread never started");
            assertEquals(List.of(namedId.get()), ThreadPlacement.threadsNamed("pintest-b-io-"));
            assertEquals(1, placement.pinThreadsNamed("pintest-b-io-with-a-long-name", false),
                    "matched on the first 15 characters, as the kernel keeps the name");
            assertEquals(Integer.toString(placement.cpu(false)), cpusOf(namedId.get()));
            worker.start();
            worker.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(failure.get() == null, () -> "placing itself failed: " + failure.get());
            assertEquals(Integer.toString(placement.cpu(true)), selfPlaced.get());
        } finally {
            done.countDown();
            io.join(TimeUnit.SECONDS.toMillis(30));
            worker.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertEquals(0, placement.pinThreadsNamed("pintest-nobody", true));
    }

    /** This machine's placement, or the calling test is skipped (not Linux, no taskset, fewer than two CPUs). */
    static ThreadPlacement placementOrSkip() {
        try {
            return ThreadPlacement.onThisMachine();
        } catch (IllegalStateException e) {
            assumeTrue(false, "placement not possible here: " + e.getMessage());
            throw e;                                // not reached: the assumption aborts the test
        }
    }

    private static String cpusOf(long tid) throws Exception {
        String status = Files.readString(Path.of("/proc/self/task/" + tid + "/status"), StandardCharsets.US_ASCII);
        List<Integer> cpus = ThreadPlacement.allowedCpus(status);
        return cpus.size() == 1 ? cpus.get(0).toString() : cpus.toString();
    }
}

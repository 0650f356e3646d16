package org.rds4j.tools;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

/**
 * Checks the {@link PayloadPattern} stream of one sender: every message must be the next one, intact.
 *
 * <p>A message ahead of the expected one opens a gap whose messages count as lost; if one of them arrives later it
 * is counted as reordered instead (and no longer lost). A message behind the expected one that was never missing is
 * a duplicate. Messages shorter than 8 bytes only show the low bytes of their number, so the checker unwraps them
 * to the nearest number that agrees with those bytes. Not thread-safe: one checker per source, one thread.
 */
final class SequenceChecker {
    /** Tracking every missing number of an absurd gap (a damaged 8-byte header) would exhaust the heap. */
    private static final int MAX_TRACKED_MISSING = 100_000;

    /** What one message turned out to be. */
    enum Outcome { OK, GAP, DUPLICATE, REORDERED, CORRUPT }

    private final Set<Long> missing = new HashSet<>();
    private long expected;
    private long lastClaimed;
    private long received;
    private long lost;
    private long duplicates;
    private long reordered;
    private long corrupt;

    /** Checks the payload between position and limit, without moving the position. */
    Outcome accept(ByteBuffer payload) {
        int size = payload.remaining();
        long claimed = PayloadPattern.claimedSequence(payload);
        received++;
        if (claimed == PayloadPattern.CORRUPT) {
            corrupt++;
            lastClaimed = expected;
            // Assume the damaged message took the expected slot, so one corruption is not also a loss.
            expected++;
            return Outcome.CORRUPT;
        }
        long k = expected + signedDistance(claimed, expected, size);
        lastClaimed = k;
        if (k == expected) {
            expected++;
            return Outcome.OK;
        }
        if (k > expected) {
            lost += k - expected;
            for (long m = expected; m < k && missing.size() < MAX_TRACKED_MISSING; m++) {
                missing.add(m);
            }
            expected = k + 1;
            return Outcome.GAP;
        }
        if (missing.remove(k)) {
            lost--;
            reordered++;
            return Outcome.REORDERED;
        }
        duplicates++;
        return Outcome.DUPLICATE;
    }

    /** How far {@code claimed} is from {@code expected}, given that only the visible bits were sent. */
    private static long signedDistance(long claimed, long expected, int size) {
        long mask = PayloadPattern.visibleMask(size);
        if (mask == -1L) {
            return claimed - expected;
        }
        long delta = (claimed - expected) & mask;
        // More than half the visible range ahead means behind: pick the nearest candidate.
        return delta > (mask >>> 1) ? delta - mask - 1 : delta;
    }

    /** The next sequence number this checker waits for. */
    long expected() {
        return expected;
    }

    /** The (unwrapped) number the last message claimed; for error details. */
    long lastClaimed() {
        return lastClaimed;
    }

    long received() {
        return received;
    }

    long lost() {
        return lost;
    }

    long duplicates() {
        return duplicates;
    }

    long reordered() {
        return reordered;
    }

    long corrupt() {
        return corrupt;
    }

    /** Lost, duplicated, reordered and corrupted messages together. */
    long problems() {
        return lost + duplicates + reordered + corrupt;
    }
}

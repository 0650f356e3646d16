package org.rds4j.core.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;

/**
 * A contract whose tests run between two stacks, host A and host B, made before each test; the sockets a test opens
 * with {@link #socket} and the further hosts it makes with {@link #otherHost} are closed after it, then the two hosts.
 */
abstract class TwoHostsContract extends HostsContract {
    protected RdsStack hostA;
    protected RdsStack hostB;
    private final List<RdsStack> extraStacks = new ArrayList<>();
    private final List<RdsSocket> sockets = new ArrayList<>();

    @BeforeEach
    void startHosts() throws IOException {
        hostA = newStack("hostA", addressA(), 0);
        hostB = newStack("hostB", addressB(), 1);
    }

    @AfterEach
    void stopHosts() {
        sockets.forEach(RdsSocket::close);
        sockets.clear();
        extraStacks.forEach(RdsStack::close);
        extraStacks.clear();
        if (hostA != null) {
            hostA.close();
        }
        if (hostB != null) {
            hostB.close();
        }
    }

    /** A socket of {@code stack} bound to {@code address} and {@code port}, closed after the test. */
    protected RdsSocket socket(RdsStack stack, InetAddress address, int port) throws IOException {
        RdsSocket s = stack.openSocket();
        sockets.add(s);
        s.bind(new InetSocketAddress(address, port));
        return s;
    }

    /** Further host {@code i}, closed after the test. */
    protected RdsStack otherHost(String name, int i) throws IOException {
        return closedAfterTest(newStack(name, h().otherHost(i), 2 + i));
    }

    /** Closes {@code stack} after the test, before hosts A and B. */
    protected RdsStack closedAfterTest(RdsStack stack) {
        extraStacks.add(stack);
        return stack;
    }
}

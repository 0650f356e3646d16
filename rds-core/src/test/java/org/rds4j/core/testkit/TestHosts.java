package org.rds4j.core.testkit;

import java.io.IOException;
import java.net.InetAddress;
import org.rds4j.RdsStack;

/**
 * How a transport's tests make their simulated hosts: one implementation per transport, shared by every contract
 * the transport runs, so the contracts themselves know nothing of addresses or ports.
 */
public interface TestHosts {
    /** Creates a stack for one host; {@code index} 0 is host A (created first in each test), 1 is host B. */
    RdsStack newStack(String name, InetAddress address, int index) throws IOException;

    InetAddress addressA() throws IOException;

    InetAddress addressB() throws IOException;

    /** An address of the right family where no host of the test listens (until a test starts one there). */
    InetAddress unreachablePeer() throws IOException;

    /**
     * The address of further host {@code i} (from 0), for tests with many hosts; all larger than host B's, so each
     * of them pokes B and B connects back. Its stack is made with {@code newStack(name, address, 2 + i)}.
     */
    InetAddress otherHost(int i) throws IOException;

    /** The transport's name, for SO_RDS_TRANSPORT. */
    String transport();
}

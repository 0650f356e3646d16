package org.rds4j.core.testkit;

import java.io.IOException;
import java.net.InetAddress;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsStack;

/**
 * What every transport contract shares: the hosts come from the transport's {@link TestHosts}, made once per test
 * instance, and the contracts ask for them through these methods.
 */
abstract class HostsContract {
    /** The transport's way of making hosts; see {@link TestHosts}. A new one per test instance. */
    protected abstract TestHosts hosts();

    private TestHosts hosts;

    final TestHosts h() {
        if (hosts == null) {
            hosts = hosts();
        }
        return hosts;
    }

    protected RdsStack newStack(String name, InetAddress address, int index) throws IOException {
        return h().newStack(name, address, index);
    }

    protected InetAddress addressA() throws IOException {
        return h().addressA();
    }

    protected InetAddress addressB() throws IOException {
        return h().addressB();
    }

    protected InetAddress unreachablePeer() throws IOException {
        return h().unreachablePeer();
    }

    protected String transport() {
        return h().transport();
    }

    /** A datagram's payload as an array, leaving the datagram's buffer as it was. */
    static byte[] bytes(RdsDatagram d) {
        byte[] b = new byte[d.length()];
        d.payload().duplicate().get(b);
        return b;
    }
}

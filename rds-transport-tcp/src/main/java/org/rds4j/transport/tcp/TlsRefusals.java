package org.rds4j.transport.tcp;

import java.net.InetSocketAddress;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says why a peer was refused for TLS reasons, at WARN, at most once per interval: a host without a trusted
 * certificate retries its connection with backoff forever, and a flood of handshakes must not flood the log. Lines
 * held back are counted and the count goes with the next line. Any thread.
 */
final class TlsRefusals {
    private static final Logger log = LoggerFactory.getLogger(TlsRefusals.class);
    static final long INTERVAL_NANOS = 60_000_000_000L;

    private final String stackName;
    private final LogRateLimit limit = new LogRateLimit(INTERVAL_NANOS);

    TlsRefusals(String stackName) {
        this.stackName = stackName;
    }

    /** A peer's TLS handshake on our TLS port failed: most often, its certificate is not trusted here. */
    void handshakeFailed(InetSocketAddress peer, Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && !(root instanceof SSLException)) {
            root = root.getCause();
        }
        report("refused a TLS connection from " + TcpTransportInstance.describe(peer) + ": the handshake failed ("
                + root + "). A peer must present a certificate this stack's trust store trusts (the SSLContext"
                + " given to RdsTlsConfig), and trust ours", peer);
    }

    /** A peer that must use TLS opened a plain RDS/TCP connection. */
    void plainRefused(InetSocketAddress peer, int tlsPort) {
        report("refused a plain RDS/TCP connection from " + TcpTransportInstance.describe(peer) + ": this stack"
                + " requires TLS from it (RdsTlsConfig.peers) on port " + tlsPort + "; configure TLS on that host, or"
                + " leave its address out of the TLS peers if it is a kernel host", peer);
    }

    private void report(String line, InetSocketAddress peer) {
        long held = limit.admit(System.nanoTime());
        if (held != LogRateLimit.HELD_BACK) {
            log.warn("stack {}: {}{}", stackName, line, held == 0 ? "" : " (" + held
                    + " more refusals since the last such line)");
        } else {
            log.debug("stack {}: refused {} for TLS reasons", stackName, peer);
        }
    }
}

package org.rds4j;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * TLS between rds4j hosts, for {@link RdsStackConfig.Builder#tls}. RDS over TCP authenticates nobody and encrypts
 * nothing; between two rds4j stacks the TCP transport can carry the same byte stream inside TLS instead, on a port of
 * its own, so that Linux kernel peers keep speaking plain RDS/TCP on 16385 to the same stack.
 *
 * <p>Both ends authenticate: the stack presents the key of the {@link SSLContext}'s key manager and requires a
 * certificate the context's trust manager trusts from the other end, whichever side connected. The trust store is
 * therefore the list of who may talk to the stack over TLS; a certificate's subject names are not checked against
 * the peer's address (issue node certificates from a CA of the cluster's own).
 *
 * <p>Which peers use TLS is a per-peer policy: {@link #peers()} (every address unless narrowed). The stack connects
 * to such a peer on {@link #port()} with TLS, and refuses a plain connection from it on the RDS/TCP port. Peers
 * outside the prefixes (kernel hosts) are spoken to in plain RDS/TCP, as before; a TLS connection that one of them
 * opens to the TLS port is still accepted once authenticated.
 *
 * <pre>{@code
 * SSLContext tls = SSLContext.getInstance("TLSv1.3");
 * tls.init(keyManagers, trustManagers, null);      // from the application's key and trust stores
 * RdsStack host = RdsStack.create(RdsStackConfig.builder()
 *         .address(InetAddress.getByName("10.1.0.5"))
 *         .tls(RdsTlsConfig.builder(tls).peers("10.1.0.0/24").build())   // rds4j hosts; the rest are kernels
 *         .build());
 * }</pre>
 */
public final class RdsTlsConfig {
    /** The port for RDS over TLS unless set: the RDS/TCP port's neighbour (no IANA port exists for it). */
    public static final int DEFAULT_PORT = RdsStackConfig.RDS_TCP_PORT + 1;

    private final SSLContext context;
    private final int port;
    private final List<RdsAddressPrefix> peers;

    private RdsTlsConfig(Builder b) {
        this.context = b.context;
        this.port = b.port;
        this.peers = List.copyOf(b.peers);
    }

    /**
     * Starts a TLS configuration.
     *
     * @param context the application's TLS context, initialised with its key managers (this host's key and
     *        certificate) and trust managers (who may connect)
     * @return a new builder
     */
    public static Builder builder(SSLContext context) {
        return new Builder(Objects.requireNonNull(context, "context is null: pass an SSLContext"
                + " initialised with this host's key managers and the cluster's trust managers"));
    }

    /**
     * The TLS context both ends of every TLS connection are made from.
     *
     * @return the context
     */
    public SSLContext context() {
        return context;
    }

    /**
     * The TCP port the stack listens on for TLS and connects to on TLS peers; {@link #DEFAULT_PORT} unless set.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * The peers that must use TLS, as prefixes; empty (the default) for every peer.
     *
     * @return the prefixes, IPv4 and IPv6
     */
    public List<RdsAddressPrefix> peers() {
        return peers;
    }

    /**
     * Whether {@code peer} must use TLS: it is inside {@link #peers()}, or that list is empty.
     *
     * @param peer the peer's address
     * @return true if connections to and from it go over TLS only
     */
    public boolean requiredFor(InetAddress peer) {
        Objects.requireNonNull(peer, "peer is null: pass the peer's InetAddress");
        return peers.isEmpty() || RdsAddressPrefix.anyContains(peers, peer);
    }

    @Override
    public String toString() {
        return "RdsTlsConfig[port=" + port + ", peers=" + (peers.isEmpty() ? "all" : peers) + ", protocol="
                + context.getProtocol() + "]";
    }

    /** Builds an {@link RdsTlsConfig}. */
    public static final class Builder {
        private final SSLContext context;
        private int port = DEFAULT_PORT;
        private final List<RdsAddressPrefix> peers = new ArrayList<>();

        private Builder(SSLContext context) {
            this.context = context;
        }

        /**
         * Sets the TLS port, see {@link RdsTlsConfig#port()}.
         *
         * @param port 1 to 65535; {@link RdsTlsConfig#DEFAULT_PORT} unless set
         * @return this builder
         */
        public Builder port(int port) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("the TLS port must be 1..65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * Adds peers that must use TLS, see {@link RdsTlsConfig#peers()}.
         *
         * @param prefixes IPv4 or IPv6 prefixes such as {@code 10.1.0.0/16}, {@code fd00::/8} or a single address
         * @return this builder
         * @throws IllegalArgumentException if one is not an address literal with an optional prefix length
         */
        public Builder peers(String... prefixes) {
            Objects.requireNonNull(prefixes, "prefixes is null: pass prefixes such as \"10.1.0.0/16\"");
            for (String p : prefixes) {
                peers.add(RdsAddressPrefix.parse(Objects.requireNonNull(p, "a prefix is null: pass prefixes such as"
                        + " \"10.1.0.0/16\", none of them null")));
            }
            return this;
        }

        /**
         * Builds the configuration.
         *
         * @return a new, immutable configuration
         */
        public RdsTlsConfig build() {
            return new RdsTlsConfig(this);
        }
    }
}

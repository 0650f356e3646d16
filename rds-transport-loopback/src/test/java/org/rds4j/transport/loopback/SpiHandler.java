package org.rds4j.transport.loopback;

import java.nio.ByteBuffer;
import org.rds4j.core.spi.ConnectionHandler;
import org.rds4j.core.spi.FrameSink;
import org.rds4j.core.spi.TransportConnection;

/** A connection handler for SPI-level tests that does nothing (bytes that come are consumed); tests override. */
abstract class SpiHandler implements ConnectionHandler {
    @Override
    public void onConnected(TransportConnection connection) {
    }

    @Override
    public void onConnectFailed(Throwable cause) {
    }

    @Override
    public void onBytes(ByteBuffer data) {
        data.position(data.limit());
    }

    @Override
    public void transmit(FrameSink sink) {
    }

    @Override
    public void onTransmitted(long streamOffset) {
    }

    @Override
    public void onClosed(Throwable cause) {
    }
}

package org.rds4j.bench.contenders;

import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.bench.Endpoint;

/**
 * One end of an Aeron link: an exclusive publication to the other end and a subscription from it. Sends retry on back
 * pressure; receives poll one fragment at a time through a {@link FragmentAssembler}, so that exactly one whole
 * message is taken per call. Both loops idle with {@link BackoffIdleStrategy} and stop once the link is closed.
 *
 * <p>{@code inside} counts the threads inside {@link #send} or {@link #receive}: the link closes the Aeron client
 * (which unmaps the log buffers) only once it is zero, since touching an unmapped buffer crashes the JVM.
 */
final class AeronEndpoint implements Endpoint {
    private final ExclusivePublication publication;
    private final Subscription subscription;
    private final BooleanSupplier closed;
    private final AtomicInteger inside;
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(0, 0);
    private final IdleStrategy sendIdle = new BackoffIdleStrategy();
    private final IdleStrategy receiveIdle = new BackoffIdleStrategy();
    private final FragmentAssembler assembler;
    private ByteBuffer target;
    private int received;

    AeronEndpoint(ExclusivePublication publication, Subscription subscription, BooleanSupplier closed,
            AtomicInteger inside) {
        this.publication = publication;
        this.subscription = subscription;
        this.closed = closed;
        this.inside = inside;
        FragmentHandler copy = (buffer, offset, length, header) -> {
            if (length > target.capacity()) {
                received = -length;
                return;
            }
            buffer.getBytes(offset, target, 0, length);
            received = length;
        };
        this.assembler = new FragmentAssembler(copy);
    }

    @Override
    public void send(ByteBuffer message) throws IOException {
        inside.incrementAndGet();
        try {
            offer(message);
        } finally {
            inside.decrementAndGet();
        }
    }

    private void offer(ByteBuffer message) throws IOException {
        checkOpen();
        int len = message.remaining();
        sendBuffer.wrap(message, message.position(), len);
        sendIdle.reset();
        while (true) {
            long result = publication.offer(sendBuffer, 0, len);
            if (result > 0) {
                break;
            }
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                throw new IOException("Aeron publication failed: " + Publication.errorString(result));
            }
            checkOpen();
            // BACK_PRESSURED, ADMIN_ACTION or NOT_CONNECTED: try again.
            sendIdle.idle();
        }
        message.position(message.limit());
    }

    @Override
    public int receive(ByteBuffer dst) throws IOException {
        inside.incrementAndGet();
        try {
            return poll(dst);
        } finally {
            inside.decrementAndGet();
        }
    }

    private int poll(ByteBuffer dst) throws IOException {
        checkOpen();
        target = dst;
        received = 0;
        receiveIdle.reset();
        while (received == 0) {
            if (subscription.poll(assembler, 1) == 0) {
                checkOpen();
                receiveIdle.idle();
            }
        }
        if (received < 0) {
            throw new IOException("a message of " + -received + " bytes does not fit in " + dst.capacity());
        }
        dst.clear().limit(received);
        return received;
    }

    private void checkOpen() throws IOException {
        if (closed.getAsBoolean() || Thread.currentThread().isInterrupted()) {
            throw new IOException("the Aeron link is closed");
        }
    }
}

package org.rds4j.spi;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * How the API finds its implementation: {@code rds-core} provides this service. Applications never call it;
 * they use {@link RdsStack#create} and {@link org.rds4j.RdsSocket#open()}.
 */
public interface RdsStackProvider {
    /**
     * Creates a new stack with the given configuration.
     *
     * @param config the stack's settings
     * @return the new stack, which the caller closes
     */
    RdsStack create(RdsStackConfig config);
}

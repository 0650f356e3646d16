package org.rds4j.core.stack;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.spi.RdsStackProvider;

/** Makes {@link CoreStack} the implementation behind {@link RdsStack#create}. */
public final class CoreStackProvider implements RdsStackProvider {
    @Override
    public RdsStack create(RdsStackConfig config) {
        return new CoreStack(config);
    }
}

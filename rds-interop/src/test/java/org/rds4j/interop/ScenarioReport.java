package org.rds4j.interop;

import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/** Prints one line per scenario with its result, so the CI log reads as a report. */
final class ScenarioReport implements TestWatcher, BeforeTestExecutionCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(ScenarioReport.class);
    /** The guest's kernel, as the harness booted it, so the lines of the three kernels' runs tell themselves apart. */
    private static final String KERNEL = "[" + Optional.ofNullable(System.getenv("RDS4J_KERNEL_VERSION"))
            .orElse("no kernel") + "]";

    @Override
    public void beforeTestExecution(ExtensionContext context) {
        context.getStore(NS).put("start", System.nanoTime());
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        line(context, "PASS", "");
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        line(context, "FAIL", String.valueOf(cause.getMessage()).lines().findFirst().orElse(""));
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        line(context, "SKIPPED", String.valueOf(cause.getMessage()));
    }

    @Override
    public void testDisabled(ExtensionContext context, Optional<String> reason) {
        line(context, "SKIPPED", reason.orElse(""));
    }

    private static void line(ExtensionContext context, String result, String detail) {
        Long start = context.getStore(NS).get("start", Long.class);
        String took = start == null ? "" : String.format(" (%.1f s)", (System.nanoTime() - start) / 1e9);
        System.out.println("KERNEL-INTEROP " + KERNEL + " " + context.getDisplayName() + ": " + result + took
                + (detail.isEmpty() ? "" : " - " + detail));
    }
}

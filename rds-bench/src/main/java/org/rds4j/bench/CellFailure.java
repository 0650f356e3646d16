package org.rds4j.bench;

/** A cell could not be measured: a message was lost or wrong, a phase hung, or the contender failed. */
final class CellFailure extends Exception {
    private static final long serialVersionUID = 1L;

    CellFailure(String message, Throwable cause) {
        super(message, cause);
    }

    /** The message and the root cause's, on one line for the table. */
    String describe() {
        Throwable root = getCause();
        while (root != null && root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == null ? getMessage() : getMessage() + ": " + root;
    }
}

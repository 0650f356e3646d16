package org.rds4j.tools;

import java.io.PrintStream;
import java.util.Set;

/** One subcommand of {@code rds4j}: its name, usage text, the options it accepts, and what it does. */
interface Command {
    String name();

    /** One line for the list of commands. */
    String description();

    /** The full usage text, ending with a newline. */
    String usage();

    /**
     * Whether the command parses its command line itself, as one that mirrors another tool's spelling must; it then
     * gets every argument as a positional ({@link Args#verbatim}), {@code -h} included.
     */
    default boolean parsesOwnArguments() {
        return false;
    }

    /** Option names (without dashes) that take a value. */
    Set<String> valueOptions();

    /** Option names (without dashes) that are flags. */
    Set<String> flagOptions();

    /**
     * Runs the command. Validates every argument before touching the network, so that a usage error never leaves
     * sockets or stacks behind.
     *
     * @return the exit status: 0 only on success
     * @throws UsageException the arguments are wrong (exit status 2)
     */
    int run(Args args, PrintStream out, PrintStream err) throws Exception;
}

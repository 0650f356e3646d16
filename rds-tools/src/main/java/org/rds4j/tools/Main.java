package org.rds4j.tools;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The {@code rds4j} command line: {@code rds4j COMMAND [OPTIONS]}. */
public final class Main {
    private static final Map<String, Command> COMMANDS = new LinkedHashMap<>();

    static {
        for (Command c : List.of(new StressCommand(), new EchoCommand(), new SendCommand(), new RecvCommand(),
                new PingCommand(), new InfoCommand(), new RdsStressCommand())) {
            COMMANDS.put(c.name(), c);
        }
    }

    private Main() {
    }

    public static void main(String[] argv) {
        // Tools print their own results; implementation INFO logs would drown them. An explicit -D still wins.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        int status = run(argv, System.out, System.err);
        System.out.flush();
        System.err.flush();
        // exit() rather than return: a stray non-daemon thread must not keep a finished tool alive.
        System.exit(status);
    }

    /** Runs a command line and returns its exit status; 2 for usage errors. */
    static int run(String[] argv, PrintStream out, PrintStream err) {
        if (argv.length == 0) {
            err.print(usage());
            return 2;
        }
        String name = argv[0];
        if (name.equals("--help") || name.equals("-h") || name.equals("help")) {
            out.print(usage());
            return 0;
        }
        if (name.equals("--version") || name.equals("-V") || name.equals("version")) {
            out.print(VersionInfo.text());
            return 0;
        }
        Command command = COMMANDS.get(name);
        if (command == null) {
            err.println("rds4j: unknown command '" + name + "'");
            err.print(usage());
            return 2;
        }
        String[] rest = java.util.Arrays.copyOfRange(argv, 1, argv.length);
        try {
            Args args = command.parsesOwnArguments() ? Args.verbatim(rest)
                    : Args.parse(rest, command.valueOptions(), command.flagOptions());
            if (args.help()) {
                out.print(command.usage());
                return 0;
            }
            return command.run(args, out, err);
        } catch (UsageException e) {
            err.println("rds4j " + name + ": " + e.getMessage());
            err.print(command.usage());
            return 2;
        } catch (ToolFailure e) {
            err.println("rds4j " + name + ": " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("rds4j " + name + ": interrupted");
            return 1;
        } catch (Exception e) {
            err.println("rds4j " + name + ": " + e);
            return 1;
        }
    }

    static String usage() {
        StringBuilder b = new StringBuilder("usage: rds4j COMMAND [OPTIONS]   (rds4j COMMAND --help for details)\n\n"
                + "commands:\n");
        for (Command c : COMMANDS.values()) {
            b.append(String.format(java.util.Locale.ROOT, "  %-10s %s\n", c.name(), c.description()));
        }
        b.append(String.format(java.util.Locale.ROOT, "  %-10s %s\n", "version",
                "print rds4j's version, the Java runtime and the transports (also --version)"));
        return b.toString();
    }
}

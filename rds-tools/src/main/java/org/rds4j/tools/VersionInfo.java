package org.rds4j.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

/**
 * {@code rds4j --version}: what a bug report needs in three lines: rds4j's version (from the library itself, see
 * {@link RdsStack#version()}), the Java runtime, and the transports installed with the one the tools use by default
 * and how its I/O runs.
 */
final class VersionInfo {
    private VersionInfo() {
    }

    static String text() {
        return "rds4j " + RdsStack.version() + "\n"
                + "java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.vendor") + " "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + ", "
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ")\n"
                + "transports: " + String.join(", ", transports()) + "\n";
    }

    /**
     * The installed transports, found the way a stack finds them (a ServiceLoader of rds-core's transport SPI); the
     * tools' default marked, TCP's I/O said. By reflection: the tools compile against rds-api only.
     */
    static List<String> transports() {
        List<String> names = new ArrayList<>();
        ClassLoader loader = VersionInfo.class.getClassLoader();
        List<Object> found = new ArrayList<>();
        java.lang.reflect.Method name;
        try {
            Class<?> spi = Class.forName("org.rds4j.core.spi.RdsTransport", false, loader);
            name = spi.getMethod("name");
            ServiceLoader.load(spi, loader).forEach(found::add);
        } catch (ReflectiveOperationException | LinkageError e) {
            return List.of("none found (rds-core is not on the class path: " + e + ")");
        } catch (java.util.ServiceConfigurationError e) {
            // A transport on the path that cannot be loaded (module-info declares the use, so modules are no cause).
            return List.of("not listed: " + e.getMessage());
        }
        for (Object t : found) {
            String n;
            try {
                n = (String) name.invoke(t);
            } catch (ReflectiveOperationException e) {
                n = t.getClass().getName() + " (its name() failed: " + e.getCause() + ")";
            }
            String d = n.equals("tcp") ? n + " (default, port " + RdsStackConfig.RDS_TCP_PORT + ", " + tcpIo() + ")"
                    : n;
            names.add(d);
        }
        names.sort(null);
        return names.isEmpty() ? List.of("none found (add rds-transport-tcp to the class path)") : names;
    }

    /**
     * How the TCP transport's I/O threads will run: native epoll where Netty's native library loads (unless the
     * stack sets tcp.native=false), NIO otherwise. Read by reflection: the tools do not compile against Netty.
     */
    private static String tcpIo() {
        try {
            Class<?> epoll = Class.forName("io.netty.channel.epoll.Epoll", true, VersionInfo.class.getClassLoader());
            boolean available = (Boolean) epoll.getMethod("isAvailable").invoke(null);
            return available ? "Netty native epoll" : "Netty NIO: native epoll unavailable";
        } catch (ReflectiveOperationException | LinkageError e) {
            return "Netty NIO: no native epoll transport on the class path";
        }
    }
}

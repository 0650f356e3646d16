package org.rds4j.tools;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.net.MalformedURLException;
import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The JVM {@code rds4j info} reads: one of this host's JVMs by process id, through the JDK's attach API, which starts
 * the JVM's local management agent (no agent jar, nothing to configure in the target) and says where it listens; or
 * any JMX service URL. Close it to close the connection.
 */
final class JmxTarget implements AutoCloseable {
    private final JMXConnector connector;
    private final MBeanServerConnection connection;
    private final String description;

    private JmxTarget(JMXConnector connector, String description) throws IOException {
        this.connector = connector;
        this.connection = connector.getMBeanServerConnection();
        this.description = description;
    }

    /**
     * Attaches to JVM {@code pid} of this host (same user), starts its local JMX agent if needed, connects.
     *
     * @throws ToolFailure no process has that id, or it is not a JVM this user can attach to: said in words
     */
    static JmxTarget attach(long pid) throws IOException, ToolFailure {
        String advice = "; give the pid of a running JVM of this user on this host that has an rds4j stack (jps"
                + " lists them), or --jmx URL";
        if (ProcessHandle.of(pid).isEmpty()) {
            throw new ToolFailure("no JVM with pid " + pid + " is running an rds4j stack: no process has that id"
                    + advice);
        }
        String address;
        VirtualMachine vm;
        try {
            vm = VirtualMachine.attach(Long.toString(pid));
        } catch (AttachNotSupportedException | IOException e) {
            // Not a JVM, another user's, or gone since the check above: the attach API's words, with what to do.
            throw new ToolFailure("cannot attach to process " + pid + " (" + e.getMessage() + ")" + advice, e);
        }
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        return connect(new JMXServiceURL(address), "JVM " + pid);
    }

    /** Connects to a JMX service URL such as {@code service:jmx:rmi:///jndi/rmi://127.0.0.1:9010/jmxrmi}. */
    static JmxTarget connect(String url) throws IOException, UsageException {
        JMXServiceURL u;
        try {
            u = new JMXServiceURL(url);
        } catch (MalformedURLException e) {
            throw new UsageException("--jmx needs a JMX service URL such as service:jmx:rmi:///jndi/rmi://HOST:PORT"
                    + "/jmxrmi, got '" + url + "': " + e.getMessage(), e);
        }
        return connect(u, url);
    }

    private static JmxTarget connect(JMXServiceURL url, String description) throws IOException {
        JMXConnector c;
        try {
            c = JMXConnectorFactory.connect(url);
        } catch (IOException e) {
            throw new IOException("cannot connect to the JMX agent of " + description + " at " + url + ": "
                    + e.getMessage(), e);
        }
        try {
            return new JmxTarget(c, description);
        } catch (IOException e) {
            c.close();
            throw e;
        }
    }

    MBeanServerConnection connection() {
        return connection;
    }

    String description() {
        return description;
    }

    @Override
    public void close() throws IOException {
        connector.close();
    }
}

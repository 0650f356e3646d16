package org.rds4j.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsAddressPrefix;
import org.rds4j.RdsDatagram;
import org.rds4j.RdsMemoryInfo;
import org.rds4j.RdsMessageInfo;
import org.rds4j.RdsPeerStateListener;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsSocketOption;
import org.rds4j.RdsSocketOptions;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsTlsConfig;
import org.rds4j.spi.RdsStackProvider;

/**
 * Walks every public constructor and method of rds-api's packages and calls it, on a real stack, with {@code null}
 * for each reference parameter in turn (the others given ordinary values): each must throw a
 * {@link NullPointerException} whose message starts with the parameter's name and says what to pass, as the API's
 * package documentation promises. Parameters documented as nullable are listed in {@link #NULLABLE}.
 */
class ApiNullArgumentsTest {
    /** Parameters whose javadoc says {@code null} is allowed, as "Class.method(Type name)". */
    private static final Set<String> NULLABLE = Set.of(
            "RdsAddresses.format(InetSocketAddress address)",          // prints "none"
            "RdsStackConfig.property(String fallback)",
            "RdsStackConfig.Builder.defaultTransport(String transport)", // the highest-priority installed one
            "RdsStackConfig.Builder.tls(RdsTlsConfig tls)",            // TLS off
            "RdsPathInfo.<init>(InetSocketAddress transportLocal)",     // no transport connection
            "RdsPathInfo.<init>(InetSocketAddress transportRemote)",
            "RdsSocketInfo.<init>(InetSocketAddress boundAddress)",     // not bound
            "RdsSocketInfo.<init>(String transport)",                   // not chosen yet
            "RdsPeerEvent.<init>(RdsPeerState previous)",               // the first report of a peer
            "RdsDatagram.sendFailed(String reason)");                   // no cause in words

    private RdsStack stack;
    private RdsSocket socket;
    private RdsSelector selector;
    private final Map<Class<?>, Object> instances = new HashMap<>();

    @BeforeEach
    void setUp() throws Exception {
        stack = RdsStack.create(RdsStackConfig.builder().name("nulls").address(InetAddress.getByName("10.98.0.1"))
                .defaultTransport(LoopbackTransport.NAME).jmx(false).build());
        socket = stack.openSocket();
        socket.configureBlocking(false);            // a missing check must fail the test, not leave it waiting
        selector = stack.openSelector();
        instances.put(RdsStack.class, stack);
        instances.put(RdsSocket.class, socket);
        instances.put(RdsSelector.class, selector);
        instances.put(RdsStackProvider.class, ServiceLoader.load(RdsStackProvider.class).findFirst().orElseThrow());
        instances.put(RdsStackConfig.class, stack.config());
        instances.put(RdsStackConfig.Builder.class, RdsStackConfig.builder());
        instances.put(RdsTlsConfig.class, RdsTlsConfig.builder(SSLContext.getDefault()).build());
        instances.put(RdsTlsConfig.Builder.class, RdsTlsConfig.builder(SSLContext.getDefault()));
        instances.put(RdsAddressPrefix.class, RdsAddressPrefix.parse("10.98.0.0/16"));
        instances.put(RdsDatagram.class, new RdsDatagram(peer(), 4000, ByteBuffer.allocate(4), 0));
        instances.put(RdsMessageInfo.class, new RdsMessageInfo());
    }

    @AfterEach
    void tearDown() {
        selector.close();
        socket.close();
        stack.close();
    }

    @Test
    void everyPublicEntryPointNamesItsNullArgument() throws Exception {
        List<String> wrong = new ArrayList<>();
        Set<String> checked = new TreeSet<>();
        for (Class<?> type : apiTypes()) {
            List<Executable> entries = new ArrayList<>();
            if (!type.isInterface() && !Modifier.isAbstract(type.getModifiers())) {
                for (Constructor<?> c : type.getConstructors()) {
                    entries.add(c);
                }
            }
            for (Method m : type.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge() && !isExempt(type, m)) {
                    entries.add(m);
                }
            }
            for (Executable e : entries) {
                Parameter[] params = e.getParameters();
                for (int i = 0; i < params.length; i++) {
                    if (params[i].getType().isPrimitive()) {
                        continue;
                    }
                    assertTrue(params[i].isNamePresent(), "rds-api is compiled without -parameters: " + e);
                    String key = key(type, e, params[i]);
                    if (NULLABLE.contains(key)) {
                        continue;
                    }
                    checked.add(key);
                    String problem = callWithNull(type, e, i);
                    if (problem != null) {
                        wrong.add(key + ": " + problem);
                    }
                }
            }
        }
        assertEquals(List.of(), wrong, "entry points whose null argument is not reported by name");
        // The walk found the API: the entry points a first program meets are among those checked.
        for (String must : List.of("RdsStack.create(RdsStackConfig config)", "RdsSocket.open(RdsStack stack)",
                "RdsSocket.send(ByteBuffer payload)", "RdsSocket.send(InetSocketAddress destination)",
                "RdsSocket.sendZeroCopy(ByteBuffer payload)", "RdsSocket.bind(InetSocketAddress local)",
                "RdsSocket.setOption(Object value)", "RdsSelector.select(ReadyHandler handler)",
                "RdsStackConfig.Builder.address(InetAddress address)", "RdsAddresses.format(InetAddress address)",
                "RdsAddressPrefix.parse(String text)", "RdsTlsConfig.builder(SSLContext context)")) {
            assertTrue(checked.contains(must), must + " was not checked; checked: " + checked);
        }
    }

    /** Enum constants' {@code valueOf} is the JDK's; user-implemented callbacks and equals take what they get. */
    private static boolean isExempt(Class<?> type, Method m) {
        return (type.isEnum() && m.getName().equals("valueOf"))
                || type == RdsSelector.ReadyHandler.class || type == RdsPeerStateListener.class
                || (m.getName().equals("equals") && m.getParameterCount() == 1);
    }

    /** Null for parameter {@code index}: a problem in words, or null when the right exception came. */
    private String callWithNull(Class<?> type, Executable e, int index) throws Exception {
        Parameter[] params = e.getParameters();
        Object[] args = new Object[params.length];
        for (int i = 0; i < params.length; i++) {
            args[i] = i == index ? null : sample(params[i].getType());
        }
        String name = params[index].getName();
        try {
            if (e instanceof Constructor<?> c) {
                c.newInstance(args);
            } else {
                Method m = (Method) e;
                m.invoke(Modifier.isStatic(m.getModifiers()) ? null : instance(type), args);
            }
            return "accepted null";
        } catch (InvocationTargetException thrown) {
            Throwable cause = thrown.getCause();
            String prefix = name + " is null: pass ";
            if (!(cause instanceof NullPointerException) || cause.getMessage() == null
                    || !cause.getMessage().startsWith(prefix)) {
                return "threw " + cause + ", not a NullPointerException starting '" + prefix + "...'";
            }
            return null;
        }
    }

    private Object instance(Class<?> type) {
        Object o = instances.get(type);
        if (o == null) {
            fail("no instance of " + type.getName() + " to call its methods on: add one to setUp");
        }
        return o;
    }

    /** An ordinary value of {@code type}, for the parameters that are not the null one. */
    private Object sample(Class<?> type) throws Exception {
        if (type == int.class) {
            return 0;
        } else if (type == long.class) {
            return 0L;
        } else if (type == boolean.class) {
            return false;
        } else if (type == String.class) {
            return "10.98.0.2";
        } else if (type == String[].class) {
            return new String[] {"10.98.0.0/16"};
        } else if (type == int[].class) {
            return new int[] {1};
        } else if (type == InetSocketAddress.class) {
            return peer();
        } else if (type == InetAddress.class) {
            return InetAddress.getByName("10.98.0.2");
        } else if (type == ByteBuffer.class) {
            return ByteBuffer.allocate(8);
        } else if (type == Duration.class) {
            return Duration.ofMillis(1);
        } else if (type == Instant.class) {
            return Instant.EPOCH;
        } else if (type == List.class) {
            return List.of();
        } else if (type == Set.class) {
            return Set.of();
        } else if (type == Map.class) {
            return Map.of();
        } else if (type == Object.class) {                 // setOption's value, for the sample option SO_SNDBUF
            return 65536;
        } else if (type == RdsSocketOption.class) {
            return RdsSocketOptions.SO_SNDBUF;
        } else if (type == SSLContext.class) {
            return SSLContext.getDefault();
        } else if (type == RdsMemoryInfo.class) {
            return new RdsMemoryInfo(0, 0, 0, 0);
        } else if (type == RdsSelector.ReadyHandler.class) {
            return (RdsSelector.ReadyHandler) (s, ops) -> { };
        } else if (type.isEnum()) {
            return type.getEnumConstants()[0];
        }
        return instance(type);
    }

    private static InetSocketAddress peer() throws IOException {
        return new InetSocketAddress(InetAddress.getByName("10.98.0.2"), 4000);
    }

    private static String key(Class<?> type, Executable e, Parameter p) {
        String owner = type.getName().substring(type.getPackageName().length() + 1).replace('$', '.');
        String method = e instanceof Constructor<?> ? "<init>" : e.getName();
        return owner + "." + method + "(" + p.getType().getSimpleName() + " " + p.getName() + ")";
    }

    /**
     * Every public class of rds-api's exported packages, read from where its classes are (a directory in the
     * build, a jar once packaged); exceptions take a message and a cause as any Throwable does, and are left out.
     */
    private static List<Class<?>> apiTypes() throws Exception {
        URI where = RdsStack.class.getProtectionDomain().getCodeSource().getLocation().toURI();
        Path root = Path.of(where);
        List<Class<?>> types = new ArrayList<>();
        if (Files.isDirectory(root)) {
            collect(root, types);
        } else {
            try (FileSystem jar = FileSystems.newFileSystem(root)) {
                collect(jar.getPath("/"), types);
            }
        }
        assertTrue(types.size() > 20, "found only " + types + " under " + root);
        return types;
    }

    private static void collect(Path root, List<Class<?>> types) throws Exception {
        for (String pkg : List.of("org/rds4j", "org/rds4j/spi")) {
            try (Stream<Path> files = Files.list(root.resolve(pkg))) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    String file = f.getFileName().toString();
                    if (!file.endsWith(".class") || file.equals("module-info.class")) {
                        continue;
                    }
                    String name = pkg.replace('/', '.') + "." + file.substring(0, file.length() - 6);
                    Class<?> c = Class.forName(name, false, RdsStack.class.getClassLoader());
                    if (isPublicApi(c) && !Throwable.class.isAssignableFrom(c)) {
                        types.add(c);
                    }
                }
            }
        }
    }

    private static boolean isPublicApi(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass() || k.isSynthetic()) {
                return false;
            }
        }
        return true;
    }
}

package org.rds4j.tools;

import java.util.List;
import java.util.Map;
import javax.management.openmbean.CompositeData;
import org.rds4j.RdsStack;

/**
 * {@code info --json}: the figures {@code info} prints, as one JSON document for scripts. Every item of the MBean's
 * rows is written under its MBean name, so nothing the tables show is missing and new items appear without a change
 * here. The sources given (or all) pick the members: {@code c} counters, {@code n}, {@code s}, {@code t} and
 * {@code T} the paths, {@code k} and {@code r} the sockets, {@code g} the congestion maps.
 */
final class InfoJson {
    /** Path items that are 64-bit sequence numbers: written unsigned, as {@code info} prints them. */
    private static final List<String> UNSIGNED = List.of("nextTxSequence", "nextRxSequence");

    private InfoJson() {
    }

    static String write(String where, List<StackView> stacks, List<String> sources) {
        JsonWriter w = new JsonWriter().beginObject();
        w.name("rds4jVersion").value(RdsStack.version());
        w.name("target").value(where);
        w.name("stacks").beginArray();
        for (StackView s : stacks) {
            w.beginObject();
            w.name("name").value(s.name());
            w.name("objectName").value(s.objectName().toString());
            if (sources.contains("c")) {
                w.name("counters").beginObject();
                for (Map.Entry<String, Long> e : s.counters().entrySet()) {
                    w.name(e.getKey()).value(e.getValue());
                }
                w.endObject();
            }
            if (sources.stream().anyMatch(List.of("n", "s", "t", "T")::contains)) {
                rows(w, "paths", s.paths());
            }
            if (sources.contains("k") || sources.contains("r")) {
                rows(w, "sockets", s.sockets());
            }
            if (sources.contains("g")) {
                rows(w, "congestionMaps", s.congestionMaps());
            }
            if (sources.contains("m") && s.offHeap() != null) {
                w.name("offHeap").beginObject();
                for (String key : s.offHeap().getCompositeType().keySet()) {
                    w.name(key);
                    item(w, key, s.offHeap().get(key));
                }
                w.endObject();
            }
            if (sources.contains("I")) {
                w.name("infinibandConnections").beginArray().endArray();   // rds4j has no InfiniBand transport
            }
            w.endObject();
        }
        return w.endArray().endObject().toString();
    }

    private static void rows(JsonWriter w, String name, List<CompositeData> rows) {
        w.name(name).beginArray();
        for (CompositeData row : rows) {
            w.beginObject();
            for (String key : row.getCompositeType().keySet()) {
                w.name(key);
                item(w, key, row.get(key));
            }
            w.endObject();
        }
        w.endArray();
    }

    private static void item(JsonWriter w, String key, Object v) {
        if (v == null) {
            w.value((String) null);
        } else if (v instanceof Long l && UNSIGNED.contains(key)) {
            w.unsigned(l);
        } else if (v instanceof Double || v instanceof Float) {
            w.value(((Number) v).doubleValue());
        } else if (v instanceof Number n) {
            w.value(n.longValue());
        } else if (v instanceof Boolean b) {
            w.value(b);
        } else if (v instanceof int[] a) {
            w.beginArray();
            for (int x : a) {
                w.value(x);
            }
            w.endArray();
        } else if (v instanceof long[] a) {
            w.beginArray();
            for (long x : a) {
                w.value(x);
            }
            w.endArray();
        } else {
            w.value(v.toString());
        }
    }
}

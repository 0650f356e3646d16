package org.rds4j.tools;

import java.util.Locale;

/**
 * A small JSON writer for {@code info --json}: objects, arrays, strings (escaped per RFC 8259), numbers and
 * booleans, written in order into one string. Commas are placed by the writer, so callers only open, name and
 * close. The output of one {@code info} is small, so nothing is streamed.
 */
final class JsonWriter {
    private final StringBuilder out = new StringBuilder();
    /** Whether the innermost open object or array has had a member yet: one bit per level, deepest lowest. */
    private long firsts = 1;
    private int depth;
    /** A name was just written: the next value belongs to it and takes no comma. */
    private boolean named;

    JsonWriter beginObject() {
        open("{");
        push();
        return this;
    }

    JsonWriter endObject() {
        pop();
        out.append('}');
        return this;
    }

    JsonWriter beginArray() {
        open("[");
        push();
        return this;
    }

    JsonWriter endArray() {
        pop();
        out.append(']');
        return this;
    }

    /** The name of the next member of the current object. */
    JsonWriter name(String name) {
        separate();
        string(out, name);
        out.append(':');
        named = true;
        return this;
    }

    JsonWriter value(String s) {
        if (s == null) {
            return raw("null");
        }
        separate();
        string(out, s);
        return this;
    }

    JsonWriter value(long n) {
        return raw(Long.toString(n));
    }

    /** A 64-bit value read as unsigned, such as a sequence number: written in full, never rounded. */
    JsonWriter unsigned(long n) {
        return raw(Long.toUnsignedString(n));
    }

    JsonWriter value(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return raw("null");                      // JSON has no NaN or infinity
        }
        return raw(String.format(Locale.ROOT, "%s", d));
    }

    JsonWriter value(boolean b) {
        return raw(b ? "true" : "false");
    }

    @Override
    public String toString() {
        if (depth != 0) {
            throw new IllegalStateException(depth + " object(s) or array(s) still open");
        }
        return out.toString();
    }

    private JsonWriter raw(String token) {
        separate();
        out.append(token);
        return this;
    }

    /** Opens with {@code token} ("{" or "["): a value of its own, so comma rules apply before it. */
    private void open(String token) {
        separate();
        out.append(token);
    }

    private void separate() {
        if (named) {
            named = false;
            return;
        }
        if (depth > 0) {
            if ((firsts & 1) == 0) {
                out.append(',');
            }
            firsts &= ~1L;
        }
    }

    private void push() {
        if (depth == 63) {
            throw new IllegalStateException("JSON nested deeper than 63 levels");
        }
        depth++;
        firsts = firsts << 1 | 1;
    }

    private void pop() {
        if (depth == 0) {
            throw new IllegalStateException("nothing open to close");
        }
        depth--;
        firsts >>>= 1;
    }

    /** Writes {@code s} as a JSON string: quotes, backslashes and control characters escaped. */
    static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    // Other control characters, and the line separators JavaScript once rejected in strings.
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}

package org.rds4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link JsonWriter}: what it writes is JSON a strict reader takes back, with every string intact. */
class JsonWriterTest {
    @Test
    void nestedValuesAndCommas() {
        String text = new JsonWriter().beginObject()
                .name("a").value(1)
                .name("b").beginArray().value("x").value(true).beginObject().endObject().beginArray().endArray()
                .endArray()
                .name("c").value((String) null)
                .name("seq").unsigned(-1L)
                .name("d").value(0.5)
                .name("nan").value(Double.NaN)
                .endObject().toString();
        assertEquals("{\"a\":1,\"b\":[\"x\",true,{},[]],\"c\":null,\"seq\":18446744073709551615,\"d\":0.5,"
                + "\"nan\":null}", text);
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) JsonTestParser.parse(text);
        assertEquals(new BigDecimal("18446744073709551615"), m.get("seq"));
        assertEquals(List.of("x", true, Map.of(), List.of()), m.get("b"));
    }

    @Test
    void everyCharacterSurvivesAsNameAndValue() {
        StringBuilder all = new StringBuilder();
        for (char c = 0; c < 0x100; c++) {
            all.append(c);
        }
        all.append("\u2028\u2029\uffff\ud83d\ude00");
        String s = all.toString();
        String text = new JsonWriter().beginObject().name(s).value(s).endObject().toString();
        assertEquals(Map.of(s, s), JsonTestParser.parse(text));
    }

    @Test
    void randomStringsRoundTrip() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        for (int n = 0; n < 2000; n++) {
            char[] cs = new char[r.nextInt(20)];
            for (int i = 0; i < cs.length; i++) {
                cs[i] = (char) (r.nextBoolean() ? r.nextInt(0x80) : r.nextInt(0x10000));
            }
            String s = new String(cs);
            String text = new JsonWriter().beginArray().value(s).endArray().toString();
            assertEquals(List.of(s), JsonTestParser.parse(text), "seed " + seed + ": " + text);
        }
    }

    @Test
    void unbalancedIsRefused() {
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginObject().toString());
        assertThrows(IllegalStateException.class, () -> new JsonWriter().endArray());
    }
}

package org.rds4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MarkdownReportTest {

    @Test
    void aNewReportKeepsTheHandWrittenSectionsOfTheFileItReplaces() {
        String hand = MarkdownReport.HAND_SECTIONS + "\n\n## A study\n\nFigures measured apart.\n";
        String old = "# rds4j performance\n\nold table\n\n" + hand;
        assertEquals("# rds4j performance\n\nnew table\n\n" + hand,
                MarkdownReport.keepingHandSections("# rds4j performance\n\nnew table\n", old));
    }

    @Test
    void withoutTheMarkerOrAFileTheReportStandsAlone() {
        assertEquals("new\n", MarkdownReport.keepingHandSections("new\n", "old report, nothing written by hand\n"));
        assertEquals("new\n", MarkdownReport.keepingHandSections("new\n", null));
    }

    @Test
    void theProjectsOwnReportHasTheMarkerBeforeItsStudies() throws Exception {
        Path doc = Path.of("..", "docs", "performance.md");   // the module's directory is the working one
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        int marker = text.indexOf(MarkdownReport.HAND_SECTIONS);
        int study = text.indexOf("## Before and after one owner per connection");
        assertTrue(marker > 0 && marker < study, "the marker line comes before the hand-written studies");
    }
}
